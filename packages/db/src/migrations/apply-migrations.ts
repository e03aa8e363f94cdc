import { randomUUID } from "node:crypto";
import type pg from "pg";
import { pgDriver } from "../sql/pg-driver.ts";
import { MIGRATIONS_DIR } from "../paths.ts";
import {
  MigrationChecksumError,
  MigrationFailedError,
  UnfinishedMigrationError,
} from "./migration-errors.ts";
import { readMigrationFiles, type MigrationFile } from "./migration-files.ts";
import { quoteIdentifier } from "./schema-name.ts";

export interface ApplyMigrationsOptions {
  connectionString: string;
  /** Postgres schema to migrate; created when missing. Default `public`. */
  schema?: string;
  /** Default: the repository's `prisma/migrations`. */
  migrationsDir?: string;
}

/** The table exactly as Prisma's schema engine creates it, so `prisma migrate deploy` reads ours. */
export const PRISMA_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** Prisma Migrate's own advisory lock key: we serialize with `prisma migrate deploy` too. */
const MIGRATE_LOCK_KEY = 72707369;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/**
 * Applies the pending committed migrations, each in its own transaction, and records them the
 * way Prisma does. Safe to call from parallel processes (advisory lock). Returns the names applied.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<string[]> {
  const schema = quoteIdentifier(options.schema ?? "public");
  const migrations = await readMigrationFiles(options.migrationsDir ?? MIGRATIONS_DIR);
  const client = new pgDriver.Client({ connectionString: options.connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`SET search_path TO ${schema}`);
    await client.query(PRISMA_MIGRATIONS_TABLE);
    const pending = await pendingMigrations(client, migrations);
    for (const migration of pending) await applyOne(client, migration);
    return pending.map((migration) => migration.name);
  } finally {
    // Closing the session releases the advisory lock even if the unlock is never reached.
    await client.end();
  }
}

async function pendingMigrations(client: pg.Client, migrations: MigrationFile[]): Promise<MigrationFile[]> {
  const { rows } = await client.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
  );
  const unfinished = rows.find((row) => row.finished_at === null);
  if (unfinished) throw new UnfinishedMigrationError(unfinished.migration_name);
  const applied = new Map(rows.map((row) => [row.migration_name, row.checksum]));
  for (const migration of migrations) {
    const checksum = applied.get(migration.name);
    if (checksum !== undefined && checksum !== migration.checksum)
      throw new MigrationChecksumError(migration.name);
  }
  return migrations.filter((migration) => !applied.has(migration.name));
}

async function applyOne(client: pg.Client, migration: MigrationFile): Promise<void> {
  try {
    await client.query("BEGIN");
    const id = randomUUID();
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), 0)`,
      [id, migration.checksum, migration.name],
    );
    await client.query(migration.sql);
    await client.query(
      `UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1`,
      [id],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw new MigrationFailedError(migration.name, error);
  }
}
