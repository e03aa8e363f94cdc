export * from "./test-database.ts";
export * from "./test-redis.ts";
export * from "./service-env.ts";
