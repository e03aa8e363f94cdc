export * from "@ratatoskr/db/testing";
export * from "@ratatoskr/runtime/testing";
export * from "./service-env.ts";
