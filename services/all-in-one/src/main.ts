import { startHost } from "@ratatoskr/service-host";
import { ALL_SERVICES } from "./services.ts";

/** All six services in one process: same code, same queues, one health server. */
await startHost({ name: "all-in-one", services: ALL_SERVICES });
