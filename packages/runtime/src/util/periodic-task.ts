import type { Logger } from "pino";

export interface PeriodicTaskOptions {
  /** Named in the log when a pass fails. */
  name: string;
  intervalMs: number;
  logger: Logger;
  /** One pass; a failure is logged and the next pass runs as planned. */
  run(): Promise<void>;
}

/**
 * Runs `run` now and then `intervalMs` after each pass ends (passes never overlap). The returned
 * function stops it and waits for a pass in flight, so shutdown can order it before the database.
 */
export function startPeriodicTask(options: PeriodicTaskOptions): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();
  const tick = () => {
    pass = options
      .run()
      .catch((err: unknown) => options.logger.error({ err, task: options.name }, "periodic task failed"))
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
