export * from "./service-definition.ts";
export * from "./host-config.ts";
export * from "./start-host.ts";
export * from "./not-implemented.ts";
export * from "./service-heartbeat.ts";
export * from "./run-main.ts";
