import type { Logger } from "pino";

/**
 * Tells of an outage in a handful of lines instead of one per failed attempt: the first failure,
 * a reminder at most every `remindEveryMs` while it lasts, and the recovery with how long it took.
 */
export interface OutageLog {
  /** A failed attempt: logged when it starts an outage or a reminder is due, else only counted. */
  failed(err: unknown): void;
  /** The dependency answers again: one line when an outage was under way, nothing otherwise. */
  recovered(): void;
  readonly down: boolean;
}

export interface OutageLogOptions {
  logger: Pick<Logger, "warn" | "info">;
  /** What is unreachable, as the message names it: "redis", "worker connection". */
  what: string;
  remindEveryMs?: number;
  now?: () => number;
  /** Turns the error into what is logged (scrubbed of secrets). */
  describe?: (err: unknown) => unknown;
}

export function createOutageLog(opts: OutageLogOptions): OutageLog {
  const now = opts.now ?? Date.now;
  const remindEveryMs = opts.remindEveryMs ?? 30_000;
  const describe = opts.describe ?? ((err: unknown) => err);
  let since: number | undefined;
  let lastLoggedAt = 0;
  let failures = 0;
  return {
    failed(err) {
      const at = now();
      failures += 1;
      if (since === undefined) {
        since = at;
        lastLoggedAt = at;
        opts.logger.warn({ err: describe(err) }, `${opts.what} unreachable; retrying`);
      } else if (at - lastLoggedAt >= remindEveryMs) {
        lastLoggedAt = at;
        opts.logger.warn(
          { err: describe(err), downForMs: at - since, failures },
          `${opts.what} still unreachable; retrying`,
        );
      }
    },
    recovered() {
      if (since === undefined) return;
      opts.logger.info({ downForMs: now() - since, failures }, `${opts.what} reachable again`);
      since = undefined;
      failures = 0;
    },
    get down() {
      return since !== undefined;
    },
  };
}
