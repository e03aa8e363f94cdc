#!/usr/bin/env node
// Init container of every Kubernetes Deployment: waits until DATABASE_URL (schema DATABASE_SCHEMA)
// carries every migration this image ships (applied by the ratatoskr-migrate Job), then exits 0.
// Gives up after WAIT_TIMEOUT_MS (default 10 min) with the last reason, exit 1.
import { createMigrationCheck, DatabaseNotReadyError } from "@ratatoskr/db";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

const connectionString = process.env.DATABASE_URL;
if (!connectionString) {
  console.error("DATABASE_URL is not set");
  process.exit(2);
}
const schema = process.env.DATABASE_SCHEMA || "public";
const timeoutMs = Number(process.env.WAIT_TIMEOUT_MS || 600_000);
const intervalMs = Number(process.env.WAIT_INTERVAL_MS || 2_000);

const pool = new pg.Pool({ connectionString, max: 1, options: `-c search_path="${schema}"` });
pool.on("error", () => undefined);
const check = createMigrationCheck({ pool, connectionString, schema });
const deadline = Date.now() + timeoutMs;
let last = "";
try {
  for (;;) {
    try {
      await check();
      console.error(`schema "${schema}": every migration of this image is applied`);
      process.exitCode = 0;
      break;
    } catch (error) {
      if (!(error instanceof DatabaseNotReadyError) || error.reason === "changed-migration") throw error;
      if (error.message !== last) console.error(`waiting: ${error.message}`);
      last = error.message;
    }
    if (Date.now() >= deadline) {
      console.error(`gave up after ${timeoutMs} ms: ${last}`);
      process.exitCode = 1;
      break;
    }
    await sleep(intervalMs);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
} finally {
  await pool.end();
}
