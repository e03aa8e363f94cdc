/** An update that fails the same way every time it is handled (it does not parse, say). */
export class PoisonUpdateError extends Error {
  override readonly name = "PoisonUpdateError";
}

/** Prisma errors about the data, not the connection: the same input fails the same way again. */
const POISON_PRISMA_CODES = new Set([
  "P2000",
  "P2005",
  "P2006",
  "P2007",
  "P2009",
  "P2011",
  "P2012",
  "P2019",
  "P2020",
  "P2023",
  "P2033",
]);

function fieldOf(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** SQLSTATEs anywhere on the error (the pg adapter nests them under meta or cause). */
function sqlStates(err: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, depth: number) => {
    if (depth > 4 || typeof value !== "object" || value === null) return;
    for (const key of ["code", "originalCode"]) {
      const code = fieldOf(value, key);
      if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) found.push(code);
    }
    for (const key of ["cause", "meta", "driverAdapterError"]) visit(fieldOf(value, key), depth + 1);
  };
  visit(err, 0);
  return found;
}

/**
 * Poison or outage (X6)? Poison — the update itself is at fault and will always fail — is logged
 * and acknowledged. Anything else is taken for an outage (Postgres or Redis away, a timeout) and
 * retried with backoff for as long as it lasts: wrongly retrying costs a delay, wrongly giving up
 * loses a message.
 */
export function isPoison(err: unknown): boolean {
  if (err instanceof PoisonUpdateError) return true;
  if (fieldOf(err, "name") === "PrismaClientValidationError") return true;
  const code = fieldOf(err, "code");
  if (typeof code === "string" && POISON_PRISMA_CODES.has(code)) return true;
  // Class 22 is "data exception" (out of range, invalid byte sequence such as U+0000…).
  return sqlStates(err).some((state) => state.startsWith("22"));
}
