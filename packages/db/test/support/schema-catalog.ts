import pg from "pg";

/** One line per database object of a schema: `kind name` → normalized definition. */
export type SchemaCatalog = Map<string, string>;

const IGNORED_TABLES = new Set(["_prisma_migrations"]);

/**
 * Reads what a schema holds — tables, columns (type, nullability, default), indexes,
 * constraints (incl. foreign keys) and enums — with the schema name taken out of every
 * definition, so two schemas built from the same DDL compare equal.
 */
export async function readSchemaCatalog(connectionString: string, schema: string): Promise<SchemaCatalog> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    // Definitions print unqualified names for objects on the search_path.
    await client.query(`SET search_path TO "${schema}"`);
    const catalog: SchemaCatalog = new Map();
    const strip = (text: string) => text.replaceAll(`"${schema}".`, "").replaceAll(`${schema}.`, "");

    const columns = await client.query<{
      table: string;
      column: string;
      type: string;
      notnull: boolean;
      default: string | null;
    }>(
      `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
              a.attnotnull AS notnull, pg_get_expr(d.adbin, d.adrelid) AS default
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid AND c.relkind = 'r'
         JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = $1
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attnum > 0 AND NOT a.attisdropped`,
      [schema],
    );
    for (const row of columns.rows) {
      if (IGNORED_TABLES.has(row.table)) continue;
      catalog.set(`table ${row.table}`, "");
      const nullability = row.notnull ? "not null" : "null";
      const fallback = row.default === null ? "" : ` default ${strip(row.default)}`;
      catalog.set(`column ${row.table}.${row.column}`, `${row.type} ${nullability}${fallback}`);
    }

    const indexes = await client.query<{ table: string; name: string; definition: string }>(
      `SELECT tablename AS table, indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = $1`,
      [schema],
    );
    for (const row of indexes.rows) {
      if (!IGNORED_TABLES.has(row.table)) catalog.set(`index ${row.name}`, strip(row.definition));
    }

    const constraints = await client.query<{ table: string; name: string; definition: string }>(
      `SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
         FROM pg_constraint k
         JOIN pg_class c ON c.oid = k.conrelid
         JOIN pg_namespace n ON n.oid = k.connamespace AND n.nspname = $1`,
      [schema],
    );
    for (const row of constraints.rows) {
      if (!IGNORED_TABLES.has(row.table))
        catalog.set(`constraint ${row.table}.${row.name}`, strip(row.definition));
    }

    const enums = await client.query<{ name: string; labels: string }>(
      `SELECT t.typname AS name, string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) AS labels
         FROM pg_type t
         JOIN pg_enum e ON e.enumtypid = t.oid
         JOIN pg_namespace n ON n.oid = t.typnamespace AND n.nspname = $1
        GROUP BY t.typname`,
      [schema],
    );
    for (const row of enums.rows) catalog.set(`enum ${row.name}`, row.labels);
    return catalog;
  } finally {
    await client.end();
  }
}

/** Human-readable differences, empty when the catalogs match. */
export function compareCatalogs(
  expected: SchemaCatalog,
  actual: SchemaCatalog,
  labels = { expected: "expected", actual: "actual" },
): string[] {
  const differences: string[] = [];
  const keys = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  for (const key of keys) {
    const want = expected.get(key);
    const got = actual.get(key);
    if (want === undefined) differences.push(`+ ${key}: only in ${labels.actual}${got ? ` (${got})` : ""}`);
    else if (got === undefined)
      differences.push(`- ${key}: only in ${labels.expected}${want ? ` (${want})` : ""}`);
    else if (want !== got)
      differences.push(`~ ${key}: ${labels.expected} "${want}" but ${labels.actual} "${got}"`);
  }
  return differences;
}
