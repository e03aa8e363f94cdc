export { createOpencodeClient } from "../../src/index.ts";
export { freePort as freePortForTests } from "@ratatoskr/testkit";
