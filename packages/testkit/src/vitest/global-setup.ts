import type { TestProject } from "vitest/node";
import { buildServicesIfStale, SERVICES_FROM_VAR } from "../processes/service-entry.ts";
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
 *
 * It also builds the services once (when the sources changed), so the processes the e2e files
 * spawn run the build, as `pnpm start` does, at half the start-up CPU of tsx. The workers inherit
 * the variable that says so; `RATATOSKR_TEST_SERVICES_FROM=source` keeps them on tsx. Watch mode
 * builds again before each rerun.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [services] = await Promise.all([resolveTestServices(process.env), servicesFromBuild()]);
  project.provide("redisUrl", services.redisUrl);
  project.provide("databaseUrl", services.databaseUrl);
  project.onTestsRerun(servicesFromBuild);
  return services.stop;
}

async function servicesFromBuild(): Promise<void> {
  if (process.env[SERVICES_FROM_VAR] === "source") return;
  await buildServicesIfStale();
  process.env[SERVICES_FROM_VAR] = "dist";
}
