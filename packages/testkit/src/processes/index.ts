export * from "./service-process.ts";
export * from "./own-redis.ts";
export * from "./own-postgres.ts";
