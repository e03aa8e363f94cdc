import { randomUUID } from "node:crypto";
import { pgDriver } from "../sql/pg-driver.ts";
import { PRISMA_MIGRATIONS_TABLE } from "../migrations/apply-migrations.ts";
import { readMigrationFiles, type MigrationFile } from "../migrations/migration-files.ts";
import { quoteIdentifier } from "../migrations/schema-name.ts";
import { MIGRATIONS_DIR } from "../paths.ts";

/** A literal for SQL text (names and checksums of committed migrations only). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * The committed migrations as one script that makes a migrated schema: the tables every
 * migration creates and the `_prisma_migrations` rows `applyMigrations` would record, in one
 * transaction and one round trip. A test file copies it into a schema of its own instead of
 * migrating one: no per-migration transactions and no migration lock, which serialized every
 * file's set-up behind every other's (a brand-new schema has no concurrent migrator to wait for).
 */
export class SchemaTemplate {
  private constructor(private readonly migrations: readonly MigrationFile[]) {}

  static async load(migrationsDir = MIGRATIONS_DIR): Promise<SchemaTemplate> {
    return new SchemaTemplate(await readMigrationFiles(migrationsDir));
  }

  /** The script for `schema` (created by it; it must not exist yet). */
  script(schema: string): string {
    const records = this.migrations
      .map(
        (m) =>
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES (${literal(randomUUID())}, ${literal(m.checksum)}, ${literal(m.name)}, now(), clock_timestamp(), 1);`,
      )
      .join("\n");
    return [
      "BEGIN;",
      `CREATE SCHEMA ${quoteIdentifier(schema)};`,
      `SET LOCAL search_path TO ${quoteIdentifier(schema)};`,
      `${PRISMA_MIGRATIONS_TABLE};`,
      ...this.migrations.map((m) => `${m.sql.trimEnd()}\n;`),
      records,
      "COMMIT;",
    ].join("\n");
  }

  /** Makes `schema` on the server at `connectionString`. */
  async copyInto(connectionString: string, schema: string): Promise<void> {
    const client = new pgDriver.Client({ connectionString });
    await client.connect();
    try {
      await client.query(this.script(schema));
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      await client.end();
    }
  }
}
