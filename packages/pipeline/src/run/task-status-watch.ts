/**
 * Watches a task's status in Postgres while an agent runs and aborts the run once the task may
 * no longer go on (e.g. `/cancel`): services talk only through queues and the database, so a
 * cancel reaches the running job by this poll. Poll every `intervalMs` (≤ 1 s keeps the 5 s
 * promise with room for the interrupt itself).
 */
export interface TaskStatusWatch {
  /** Aborts when the task left the statuses the run may continue in, or `parent` aborts. */
  readonly signal: AbortSignal;
  /** The status that stopped the run, once it did. */
  stoppedBy(): string | undefined;
  stop(): void;
}

export interface TaskStatusWatchOptions {
  /** Reads the task's current status (undefined: the task is gone). */
  readStatus: () => Promise<string | undefined>;
  /** Statuses in which the run goes on. */
  continueIn: ReadonlySet<string>;
  intervalMs: number;
  parent?: AbortSignal;
  onError?: (err: unknown) => void;
}

export function watchTaskStatus(options: TaskStatusWatchOptions): TaskStatusWatch {
  const controller = new AbortController();
  let stoppedBy: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const onParentAbort = () => controller.abort(options.parent?.reason);
  options.parent?.addEventListener("abort", onParentAbort, { once: true });

  const tick = async () => {
    try {
      const status = await options.readStatus();
      if (stopped) return;
      if (status === undefined || !options.continueIn.has(status)) {
        stoppedBy = status ?? "deleted";
        controller.abort(new Error(`task is ${stoppedBy}`));
        return;
      }
    } catch (err) {
      // A database blip must not end the run; the next poll tries again.
      options.onError?.(err);
    }
    if (!stopped) timer = setTimeout(() => void tick(), options.intervalMs);
  };
  timer = setTimeout(() => void tick(), options.intervalMs);

  return {
    signal: controller.signal,
    stoppedBy: () => stoppedBy,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      options.parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
