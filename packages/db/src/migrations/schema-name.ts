/** Postgres identifiers we create ourselves (test schemas, DATABASE_SCHEMA): plain lower-case names only, so quoted and unquoted uses agree. */
const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): string {
  if (!SAFE_IDENTIFIER.test(schema)) throw new Error(`invalid Postgres schema name "${schema}"`);
  return schema;
}

export function quoteIdentifier(name: string): string {
  return `"${assertSchemaName(name)}"`;
}
