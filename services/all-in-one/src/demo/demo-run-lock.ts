import { pgDriver } from "@ratatoskr/db";
import { dropDemoData } from "./demo-teardown.ts";

const DEMO_SCHEMA = /^ratatoskr_demo_([0-9a-f]+)$/;

/**
 * Every demo run holds a session-level Postgres advisory lock named after its schema for as long
 * as it lives; Postgres releases it when the run's connection closes, however the run ended. So a
 * demo schema whose lock can be taken belongs to a run that is gone (killed with SIGKILL, where
 * nothing could clean up): `sweepAbandonedDemos` drops it and its queues. A live run's data is
 * never touched.
 */
export async function holdRunLock(databaseUrl: string, schema: string): Promise<{ release(): Promise<void> }> {
  const client = new pgDriver.Client({ connectionString: databaseUrl });
  await client.connect();
  client.on("error", () => undefined); // a connection cut at stop is not the demo's concern
  await client.query("SELECT pg_advisory_lock(hashtext($1))", [schema]);
  return { release: () => client.end() };
}

/** Drops the schema and queues of every demo run that no longer holds its lock; returns their schemas. */
export async function sweepAbandonedDemos(databaseUrl: string, redisUrl: string): Promise<string[]> {
  const client = new pgDriver.Client({ connectionString: databaseUrl });
  await client.connect();
  const swept: string[] = [];
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name LIKE 'ratatoskr\\_demo\\_%'",
    );
    for (const { name } of rows) {
      const id = DEMO_SCHEMA.exec(name)?.[1];
      if (!id) continue;
      const { rows: got } = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_lock(hashtext($1)) AS locked",
        [name],
      );
      if (!got[0]?.locked) continue; // its run is alive
      try {
        await dropDemoData(databaseUrl, redisUrl, name, `ratatoskr-demo-${id}`);
        swept.push(name);
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext($1))", [name]);
      }
    }
  } finally {
    await client.end();
  }
  return swept;
}
