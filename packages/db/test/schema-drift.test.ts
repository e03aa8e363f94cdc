import { readFile } from "node:fs/promises";
import { applyMigrations, PRISMA_SCHEMA_PATH } from "@ratatoskr/db";
import { dropSchema, testSchemaName } from "../src/testing/index.ts";
import { afterAll, describe, expect, inject, it } from "vitest";
import { migrateDiffScript } from "../src/prisma-cli/migrate-diff.ts";
import { compareCatalogs, readSchemaCatalog } from "./support/schema-catalog.ts";
import { runSql } from "./support/sql.ts";

const databaseUrl = inject("databaseUrl");
const schemas: string[] = [];

function freshSchema(): string {
  const schema = testSchemaName();
  schemas.push(schema);
  return schema;
}

afterAll(async () => {
  await Promise.all(schemas.map((schema) => dropSchema(databaseUrl, schema)));
});

describe("schema drift", () => {
  it("the committed migrations build exactly the database schema.prisma describes", async () => {
    const fromSchemaFile = freshSchema();
    const fromMigrations = freshSchema();
    const datamodel = await readFile(PRISMA_SCHEMA_PATH, "utf8");
    const sql = await migrateDiffScript({ from: { empty: true }, to: { datamodel }, databaseUrl });
    await runSql(databaseUrl, fromSchemaFile, sql);
    await applyMigrations({ connectionString: databaseUrl, schema: fromMigrations });

    const differences = compareCatalogs(
      await readSchemaCatalog(databaseUrl, fromSchemaFile),
      await readSchemaCatalog(databaseUrl, fromMigrations),
      { expected: "schema.prisma", actual: "prisma/migrations" },
    );
    const hint = "schema.prisma and prisma/migrations disagree; run `pnpm db:diff --create <name>`:\n";
    expect(differences, hint + differences.join("\n")).toEqual([]);
  });

  it("catches a column the migrations lack", async () => {
    const migrated = freshSchema();
    const drifted = freshSchema();
    await applyMigrations({ connectionString: databaseUrl, schema: migrated });
    await applyMigrations({ connectionString: databaseUrl, schema: drifted });
    await runSql(
      databaseUrl,
      drifted,
      `ALTER TABLE tasks ADD COLUMN labels TEXT[]; CREATE INDEX tasks_labels_idx ON tasks(labels)`,
    );

    const differences = compareCatalogs(
      await readSchemaCatalog(databaseUrl, migrated),
      await readSchemaCatalog(databaseUrl, drifted),
    );
    expect(differences).toEqual([
      "+ column tasks.labels: only in actual (text[] null)",
      "+ index tasks_labels_idx: only in actual (CREATE INDEX tasks_labels_idx ON tasks USING btree (labels))",
    ]);
  });
});

describe("compareCatalogs", () => {
  it("names what is missing, extra and different", () => {
    const expected = new Map([
      ["table tasks", ""],
      ["column tasks.id", "integer not null"],
      ["column tasks.status", "text not null"],
      ["constraint tasks.tasks_pkey", "PRIMARY KEY (id)"],
    ]);
    const actual = new Map([
      ["table tasks", ""],
      ["column tasks.id", "integer not null"],
      ["column tasks.status", "text null"],
      ["enum Role", "user, assistant"],
    ]);
    expect(compareCatalogs(expected, actual)).toEqual([
      '~ column tasks.status: expected "text not null" but actual "text null"',
      "- constraint tasks.tasks_pkey: only in expected (PRIMARY KEY (id))",
      "+ enum Role: only in actual (user, assistant)",
    ]);
  });

  it("finds nothing between equal catalogs", () => {
    const catalog = new Map([["column tasks.id", "integer not null"]]);
    expect(compareCatalogs(catalog, new Map(catalog))).toEqual([]);
  });
});
