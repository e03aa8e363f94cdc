import { createRepositories, type PrismaClient, type Repositories } from "@ratatoskr/db";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../src/testing/index.ts";

export interface TestRepositories {
  readonly prisma: PrismaClient;
  readonly repos: Repositories;
}

/** This file's own migrated schema and its repositories, set up before and dropped after its tests. */
export function useTestRepositories(): TestRepositories {
  let database: TestDatabase | undefined;
  let repos: Repositories | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    repos = createRepositories(database.db.prisma);
  });
  afterAll(async () => {
    await database?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("useTestRepositories: used outside a test");
    return value;
  };
  return {
    get prisma() {
      return ready(database).db.prisma;
    },
    get repos() {
      return ready(repos);
    },
  };
}
