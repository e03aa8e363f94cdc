import { createRepositories } from "@ratatoskr/db";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../generated/client.ts";
import { markDispatchedWriter } from "../src/follow-ups/dispatch-marks.ts";
import { registerSqlPool } from "../src/sql/sql-pool.ts";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.ts";

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

describe("dispatched marks", () => {
  it("commit without waiting for the WAL flush, and leave the pooled connection's synchronous commits on", async () => {
    const repos = createRepositories(t.db.prisma);
    const task = await repos.tasks.createTelegramTask({ chatId: 7, maxTurns: 5, maxRounds: 3 });
    const { followUps } = await repos.applyTransition(task.id, { type: "turn.received" });
    const ids = followUps.map((f) => f.id);
    expect(ids.length).toBeGreaterThan(0);

    // The writer's statement runs on one connection inside a transaction the test holds open, so
    // the setting its commit will use can be read before the commit, and again after it.
    const seen: { atCommit?: string; afterwards?: string } = {};
    const inspecting = {
      async query(config: pg.QueryConfig) {
        const client = await t.db.pool.connect();
        try {
          await client.query("BEGIN");
          const result = await client.query(config);
          seen.atCommit = (await client.query("SELECT current_setting('synchronous_commit') AS s")).rows[0].s;
          await client.query("COMMIT");
          seen.afterwards = (await client.query("SELECT current_setting('synchronous_commit') AS s")).rows[0].s;
          return result;
        } finally {
          client.release();
        }
      },
    };
    const prisma = {} as PrismaClient;
    registerSqlPool(prisma, inspecting as unknown as pg.Pool);

    await markDispatchedWriter(prisma)(ids);

    expect(seen).toEqual({ atCommit: "off", afterwards: "on" });
    const rows = await t.db.prisma.followUp.findMany({ where: { id: { in: ids } } });
    expect(rows.every((row) => row.dispatchedAt instanceof Date)).toBe(true);
  });
});
