import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.ts";

/**
 * Postgres ends idle connections when it stops or restarts ("terminating connection due to
 * administrator command"). A process whose idle sweeps use the pg pool directly may never have
 * let Prisma connect (and add its own listener), so the pool must have one from the start: an
 * unheard `error` event on the pool is an uncaught exception that takes the whole service down.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

describe("the database's pg pool", () => {
  it("survives Postgres ending an idle connection before Prisma ever ran a query, and answers again", async () => {
    const { pool } = t.db;
    const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    expect(pool.idleCount).toBeGreaterThan(0);

    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    // The pool drops the dead client; the process is still here to see it.
    await vi.waitFor(() => expect(pool.totalCount).toBe(0), { timeout: 10_000, interval: 20 });
    expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
  });
});
