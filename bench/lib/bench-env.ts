/** Postgres and Redis for a bench run: its own schema and key prefix, dropped afterwards. */
import { randomBytes } from "node:crypto";
import { applyMigrations, createDatabase, type Database } from "../../packages/db/src/index.ts";
import { Redis } from "ioredis";
import pg from "pg";

export const DATABASE_URL = process.env["DATABASE_URL"] ?? "postgresql://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379";

export function benchId(name: string): string {
  return `bench_${name}_${randomBytes(4).toString("hex")}`;
}

export async function benchDatabase(
  name: string,
): Promise<{ db: Database; schema: string; drop(): Promise<void> }> {
  const schema = benchId(name);
  await applyMigrations({ connectionString: DATABASE_URL, schema });
  const db = createDatabase({ connectionString: DATABASE_URL, schema });
  return {
    db,
    schema,
    drop: async () => {
      await db.close();
      await dropSchema(DATABASE_URL, schema);
    },
  };
}

/** Removes every Redis key under a bench's prefix (its queues, job records, heartbeats). */
export async function deletePrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 }) as AsyncIterable<
      string[]
    >)
      if (keys.length > 0) await redis.unlink(...keys);
  } finally {
    redis.disconnect();
  }
}

async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
