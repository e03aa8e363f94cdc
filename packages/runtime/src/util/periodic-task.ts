import type { Logger } from "pino";
import { isOutageError } from "../worker/outage-errors.ts";

export interface PeriodicTaskOptions {
  /** Named in the log when a pass fails. */
  name: string;
  intervalMs: number;
  logger: Pick<Logger, "warn" | "error" | "info">;
  /** One pass; a failure is logged (see below) and the next pass runs as planned. */
  run(): Promise<void>;
  /** While passes keep failing, a reminder at most this often (default 60 s). */
  remindEveryMs?: number;
  now?: () => number;
}

/**
 * Runs `run` now and then `intervalMs` after each pass ends (passes never overlap). The returned
 * function stops it and waits for a pass in flight, so shutdown can order it before the database.
 *
 * Failing passes are told in a handful of lines, whatever the interval: the first failure (a
 * warning when Postgres or Redis is away — an outage is not our error —, an error otherwise), a
 * reminder with the count while they go on, and one line when a pass succeeds again.
 */
export function startPeriodicTask(options: PeriodicTaskOptions): () => Promise<void> {
  const now = options.now ?? Date.now;
  const remindEveryMs = options.remindEveryMs ?? 60_000;
  const { logger, name } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();
  let failing: { since: number; loggedAt: number; failures: number } | undefined;

  const failed = (err: unknown) => {
    const at = now();
    const level = isOutageError(err) ? "warn" : "error";
    if (!failing) {
      failing = { since: at, loggedAt: at, failures: 1 };
      logger[level]({ err, task: name }, level === "warn" ? "periodic task paused: a dependency is away; retrying" : "periodic task failed; retrying");
      return;
    }
    failing.failures += 1;
    if (at - failing.loggedAt < remindEveryMs) return;
    failing.loggedAt = at;
    logger[level]({ err, task: name, failures: failing.failures, failingForMs: at - failing.since }, "periodic task still failing");
  };
  const succeeded = () => {
    if (!failing) return;
    logger.info({ task: name, failures: failing.failures, failedForMs: now() - failing.since }, "periodic task works again");
    failing = undefined;
  };

  const tick = () => {
    pass = options
      .run()
      .then(succeeded, failed)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs);
      });
  };
  timer = setTimeout(tick, 0);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await pass;
  };
}
