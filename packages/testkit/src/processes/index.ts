export * from "./service-process.ts";
export * from "./own-redis.ts";
