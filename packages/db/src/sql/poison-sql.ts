/**
 * Postgres refused the statement for the data it carries, so the same input will always fail:
 * SQLSTATE class 22 (data exception: out of range, NUL bytes, bad encoding), 23 (integrity) or
 * 54 (too long). Anything else, an outage above all, may pass when tried again.
 */
export function isPoisonSqlError(error: unknown): boolean {
  return /^(22|23|54)[0-9A-Z]{3}$/.test(sqlState(error) ?? "");
}

/** A deadlock or serialization failure: the statement lost to a concurrent one, nothing was written. */
export function isConflictSqlError(error: unknown): boolean {
  const code = sqlState(error);
  return code === "40P01" || code === "40001";
}

function sqlState(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}
