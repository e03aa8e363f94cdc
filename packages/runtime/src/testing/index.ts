/** Per-test-file Redis isolation for vitest (imports vitest: never from production code). */
export * from "./test-redis.ts";
