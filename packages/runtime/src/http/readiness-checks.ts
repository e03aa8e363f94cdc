import type { Redis } from "ioredis";
import { scrubSecrets } from "../logging/secret-scrubber.ts";
import { withTimeout } from "../util/with-timeout.ts";

/** Resolves when the dependency is usable, throws (with a reason) when it is not. */
export type ReadinessCheck = () => Promise<void>;

export type CheckStatus = "ok" | "failed";

export interface ReadinessReport {
  readonly status: "ok" | "failed";
  readonly checks: Readonly<Record<string, CheckStatus>>;
  /** Why each failed check failed, secrets scrubbed. */
  readonly errors?: Readonly<Record<string, string>>;
}

export function redisCheck(connection: Redis): ReadinessCheck {
  return async () => {
    const reply = await connection.ping();
    if (reply !== "PONG") throw new Error(`unexpected PING reply ${JSON.stringify(reply)}`);
  };
}

/**
 * The workers can take jobs: their Redis connection is up (a worker connection queues commands
 * while Redis is away, so a bare PING would only hang) and every worker is running.
 */
export function workerCheck(
  connection: Redis,
  workers: () => ReadonlyArray<{ isRunning(): boolean; name: string }>,
): ReadinessCheck {
  return async () => {
    if (connection.status !== "ready") throw new Error(`worker connection is ${connection.status}`);
    const stopped = workers()
      .filter((w) => !w.isRunning())
      .map((w) => w.name);
    if (stopped.length > 0) throw new Error(`workers not running: ${stopped.join(", ")}`);
    const reply = await connection.ping();
    if (reply !== "PONG") throw new Error(`unexpected PING reply ${JSON.stringify(reply)}`);
  };
}

/** Runs all checks concurrently, each bounded by `timeoutMs`, so one hung dependency cannot hang the probe. */
export async function runReadinessChecks(
  checks: Readonly<Record<string, ReadinessCheck>>,
  timeoutMs: number,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(Promise.resolve().then(check), timeoutMs, `${name} check`);
        return [name, undefined] as const;
      } catch (err) {
        return [name, scrubSecrets(err instanceof Error ? err.message : String(err))] as const;
      }
    }),
  );
  const checksOut: Record<string, CheckStatus> = {};
  const errors: Record<string, string> = {};
  for (const [name, error] of results) {
    checksOut[name] = error === undefined ? "ok" : "failed";
    if (error !== undefined) errors[name] = error;
  }
  const failed = Object.keys(errors).length > 0;
  return failed ? { status: "failed", checks: checksOut, errors } : { status: "ok", checks: checksOut };
}
