import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  applyMigrations,
  MigrationChecksumError,
  MigrationFailedError,
  MIGRATIONS_DIR,
  UnfinishedMigrationError,
} from "@ratatoskr/db";
import { dropSchema, testSchemaName } from "../src/testing/index.ts";
import { afterAll, afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { migrationChecksum, readMigrationFiles } from "../src/migrations/migration-files.ts";
import { queryRows, runSql } from "./support/sql.ts";

const connectionString = inject("databaseUrl");
const schemas: string[] = [];
let migrationsDir: string;

function freshSchema(): string {
  const schema = testSchemaName();
  schemas.push(schema);
  return schema;
}

async function writeMigration(name: string, sql: string): Promise<void> {
  await mkdir(join(migrationsDir, name), { recursive: true });
  await writeFile(join(migrationsDir, name, "migration.sql"), sql);
}

beforeEach(async () => {
  migrationsDir = await mkdtemp(join(tmpdir(), "ratatoskr-migrations-"));
  await writeMigration("20260101000000_first", `CREATE TABLE "a" ("id" INTEGER NOT NULL PRIMARY KEY);\n`);
  await writeMigration("20260102000000_second", `CREATE TABLE "b" ("id" INTEGER NOT NULL PRIMARY KEY);\n`);
});

afterEach(async () => {
  await rm(migrationsDir, { recursive: true, force: true });
});

afterAll(async () => {
  await Promise.all(schemas.map((schema) => dropSchema(connectionString, schema)));
});

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  applied_steps_count: number;
}

const appliedRows = (schema: string) =>
  queryRows<MigrationRow>(
    connectionString,
    `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "${schema}"."_prisma_migrations" ORDER BY migration_name`,
  );

describe("applyMigrations", () => {
  it("applies the committed migrations in order and records them the way Prisma does", async () => {
    const schema = freshSchema();
    const applied = await applyMigrations({ connectionString, schema });

    const files = await readMigrationFiles(MIGRATIONS_DIR);
    expect(applied).toEqual(files.map((file) => file.name));
    const rows = await appliedRows(schema);
    expect(rows.map((row) => row.migration_name)).toEqual(applied);
    for (const row of rows) {
      const bytes = await readFile(join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(migrationChecksum(bytes));
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("creates _prisma_migrations with Prisma's exact columns", async () => {
    const schema = freshSchema();
    await applyMigrations({ connectionString, schema, migrationsDir });
    const columns = await queryRows<{
      column_name: string;
      type: string;
      nullable: string;
      default: string | null;
    }>(
      connectionString,
      `SELECT column_name, format_type(a.atttypid, a.atttypmod) AS type, is_nullable AS nullable, column_default AS default
         FROM information_schema.columns c
         JOIN pg_attribute a ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass AND a.attname = c.column_name
        WHERE table_schema = $1 AND table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      [schema],
    );
    expect(columns).toEqual([
      { column_name: "id", type: "character varying(36)", nullable: "NO", default: null },
      { column_name: "checksum", type: "character varying(64)", nullable: "NO", default: null },
      { column_name: "finished_at", type: "timestamp with time zone", nullable: "YES", default: null },
      { column_name: "migration_name", type: "character varying(255)", nullable: "NO", default: null },
      { column_name: "logs", type: "text", nullable: "YES", default: null },
      { column_name: "rolled_back_at", type: "timestamp with time zone", nullable: "YES", default: null },
      { column_name: "started_at", type: "timestamp with time zone", nullable: "NO", default: "now()" },
      { column_name: "applied_steps_count", type: "integer", nullable: "NO", default: "0" },
    ]);
  });

  it("applies only what is new on a second run", async () => {
    const schema = freshSchema();
    expect(await applyMigrations({ connectionString, schema, migrationsDir })).toHaveLength(2);
    expect(await applyMigrations({ connectionString, schema, migrationsDir })).toEqual([]);
    await writeMigration("20260103000000_third", `CREATE TABLE "c" ("id" INTEGER NOT NULL PRIMARY KEY);\n`);
    expect(await applyMigrations({ connectionString, schema, migrationsDir })).toEqual([
      "20260103000000_third",
    ]);
  });

  it("applies each migration once when callers race", async () => {
    const schema = freshSchema();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => applyMigrations({ connectionString, schema, migrationsDir })),
    );
    expect(results.flat().sort()).toEqual(["20260101000000_first", "20260102000000_second"]);
    expect(await appliedRows(schema)).toHaveLength(2);
  });

  it("refuses when an applied migration was edited", async () => {
    const schema = freshSchema();
    await applyMigrations({ connectionString, schema, migrationsDir });
    await writeMigration("20260101000000_first", `CREATE TABLE "a" ("id" BIGINT NOT NULL PRIMARY KEY);\n`);
    await expect(applyMigrations({ connectionString, schema, migrationsDir })).rejects.toThrow(
      MigrationChecksumError,
    );
  });

  it("rolls a failing migration back completely and records nothing for it", async () => {
    const schema = freshSchema();
    await writeMigration(
      "20260103000000_broken",
      `CREATE TABLE "c" ("id" INTEGER);\nSELECT * FROM "missing";\n`,
    );
    const attempt = applyMigrations({ connectionString, schema, migrationsDir });
    await expect(attempt).rejects.toThrow(MigrationFailedError);
    await expect(attempt).rejects.toThrow(/20260103000000_broken failed: relation "missing" does not exist/);
    expect((await appliedRows(schema)).map((row) => row.migration_name)).toEqual([
      "20260101000000_first",
      "20260102000000_second",
    ]);
    const tables = await queryRows(
      connectionString,
      `SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'c'`,
      [schema],
    );
    expect(tables).toEqual([]);
  });

  it("refuses to continue past a migration Prisma left unfinished", async () => {
    const schema = freshSchema();
    await applyMigrations({ connectionString, schema, migrationsDir });
    await runSql(
      connectionString,
      schema,
      `UPDATE "_prisma_migrations" SET finished_at = NULL WHERE migration_name = '20260102000000_second'`,
    );
    await expect(applyMigrations({ connectionString, schema, migrationsDir })).rejects.toThrow(
      UnfinishedMigrationError,
    );
  });
});
