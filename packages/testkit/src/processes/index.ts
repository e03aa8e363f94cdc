export * from "./service-process.ts";
export * from "./own-redis.ts";
export * from "./own-postgres.ts";
export { buildServicesIfStale, serviceEntryArgs, SERVICES_FROM_VAR } from "./service-entry.ts";
