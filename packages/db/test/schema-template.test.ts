import { applyMigrations } from "@ratatoskr/db";
import { afterAll, describe, expect, inject, it } from "vitest";
import { dropSchema, SchemaTemplate, testSchemaName } from "../src/testing/index.ts";
import { compareCatalogs, readSchemaCatalog } from "./support/schema-catalog.ts";
import { queryRows } from "./support/sql.ts";

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

const records = (schema: string) =>
  queryRows<{ migration_name: string; checksum: string; applied_steps_count: number; finished: boolean }>(
    databaseUrl,
    `SELECT migration_name, checksum, applied_steps_count, finished_at IS NOT NULL AS finished
       FROM "${schema}"."_prisma_migrations" ORDER BY migration_name`,
  );

describe("the schema template test files copy", () => {
  it("builds exactly what the committed migrations build, recorded as applied, so migrating it again is a no-op", async () => {
    const copied = freshSchema();
    const migrated = freshSchema();
    await (await SchemaTemplate.load()).copyInto(databaseUrl, copied);
    await applyMigrations({ connectionString: databaseUrl, schema: migrated });

    expect(
      compareCatalogs(await readSchemaCatalog(databaseUrl, migrated), await readSchemaCatalog(databaseUrl, copied), {
        expected: "migrated",
        actual: "copied",
      }),
    ).toEqual([]);
    expect(await records(copied)).toEqual(await records(migrated));
    expect(await applyMigrations({ connectionString: databaseUrl, schema: copied })).toEqual([]);
  });

  it("leaves nothing behind when the script fails", async () => {
    const taken = freshSchema();
    const template = await SchemaTemplate.load();
    await template.copyInto(databaseUrl, taken);
    // The schema exists already: the whole script rolls back, the first copy untouched.
    await expect(template.copyInto(databaseUrl, taken)).rejects.toThrow(/already exists/);
    expect((await records(taken)).length).toBeGreaterThan(0);
  });
});
