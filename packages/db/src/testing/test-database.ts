import { randomBytes } from "node:crypto";
import { createDatabase, type Database } from "../database.ts";
import { SchemaTemplate } from "./schema-template.ts";
import { pgDriver } from "../sql/pg-driver.ts";
import { inject } from "vitest";

export interface TestDatabase {
  /** The server URL; pass `schema` along with it (tables live in that schema, not `public`). */
  connectionString: string;
  /** `t_<random>`: this test file's own schema, migrated with the committed migrations. */
  schema: string;
  db: Database;
  /** Closes the client and drops the schema with everything in it. */
  drop(): Promise<void>;
}

/** A fresh schema name; files that each use their own can run in parallel on one database. */
export function testSchemaName(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

/** This process's copy of the committed migrations as one script, read once. */
let template: Promise<SchemaTemplate> | undefined;

/**
 * A migrated, empty schema of its own for one test file:
 * `const t = await createTestDatabase()` in beforeAll, `await t.drop()` in afterAll. It is a copy
 * of the schema template (the committed migrations as one script, one round trip) rather than a
 * migration run per file.
 */
export async function createTestDatabase(
  connectionString: string = inject("databaseUrl"),
): Promise<TestDatabase> {
  const schema = testSchemaName();
  await (await (template ??= SchemaTemplate.load())).copyInto(connectionString, schema);
  const db = createDatabase({ connectionString, schema });
  return {
    connectionString,
    schema,
    db,
    drop: async () => {
      await db.close();
      await dropSchema(connectionString, schema);
    },
  };
}

export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pgDriver.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema.replace(/"/g, '""')}" CASCADE`);
  } finally {
    await client.end();
  }
}
