import type { TestProject } from "vitest/node";
import { resolveTestServices } from "./test-services.ts";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    databaseUrl: string;
  }
}

/**
 * Runs once per `vitest run`: finds Redis and Postgres (env, else testcontainers when Docker
 * answers) and hands their URLs to every test file. Files isolate themselves further
 * (own Postgres schema, own Redis key prefix), so they can run in parallel.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = await resolveTestServices(process.env);
  project.provide("redisUrl", services.redisUrl);
  project.provide("databaseUrl", services.databaseUrl);
  return services.stop;
}
