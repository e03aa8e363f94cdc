/**
 * Is this failure an outage of a dependency (Postgres or Redis unreachable, a connection cut)
 * rather than a fault of the job? An outage is waited out — the job is delayed without using an
 * attempt, for as long as it lasts — instead of failing the job after its few retries.
 */

/** Prisma: can't reach (P1001), timed out (P1002, P1008), connection closed (P1017), pool timeout (P2024). */
const PRISMA_OUTAGE_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/**
 * Node socket errors, only as the error thrown itself (pg's pool and ioredis throw them as they
 * are). Wrapped inside another error they are some other client's (fetch's "fetch failed",
 * opencode's "unreachable"), whose callers decide for themselves.
 */
const ERRNO_OUTAGE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/** Prisma's driver adapter: the kinds that mean the server is away. */
const ADAPTER_OUTAGE_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
/** SQLSTATE: class 08 (connection exception), 57P01–57P03 (shutting down, cannot connect now). */
const isOutageSqlState = (state: string) => state.startsWith("08") || /^57P0[123]$/.test(state);
const OUTAGE_MESSAGES = [
  /Can't reach database server/,
  /Connection terminated/i,
  /terminating connection due to administrator command/,
  /the database system is (shutting down|starting up)/,
  /Connection is closed/,
  /Stream isn't writeable and enableOfflineQueue options is false/,
  /Reached the max retries per request limit/,
];

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

export function isOutageError(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): boolean => {
    if (depth > 5 || typeof value !== "object" || value === null || seen.has(value)) return false;
    seen.add(value);
    const code = field(value, "code");
    if (typeof code === "string") {
      if (PRISMA_OUTAGE_CODES.has(code) || (depth === 0 && ERRNO_OUTAGE_CODES.has(code))) return true;
      if (/^[0-9A-Z]{5}$/.test(code) && isOutageSqlState(code)) return true;
    }
    const kind = field(value, "kind");
    if (typeof kind === "string" && ADAPTER_OUTAGE_KINDS.has(kind)) return true;
    const message = field(value, "message");
    if (typeof message === "string" && OUTAGE_MESSAGES.some((m) => m.test(message))) return true;
    const nested = ["cause", "meta", "driverAdapterError", "originalError"].map((key) => field(value, key));
    const errors = field(value, "errors");
    if (Array.isArray(errors)) nested.push(...errors);
    return nested.some((inner) => visit(inner, depth + 1));
  };
  return visit(err, 0);
}

/** Delay before the n-th (1-based) outage retry of a job: `firstMs` doubling up to 10 times that. */
export function outageDelayMs(retry: number, firstMs = 1_000): number {
  return Math.min(firstMs * 2 ** Math.max(0, retry - 1), firstMs * 10);
}
