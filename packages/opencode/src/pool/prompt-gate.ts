import { PromptQueueTimeoutError } from "../errors/prompt-queue-timeout.error.ts";

/**
 * A per-server cap on concurrent agent runs: at most `limit` hold a slot, the rest wait in FIFO
 * order (a run that gives up — abort or deadline — leaves the queue without disturbing the order).
 */
export class PromptGate {
  private running = 0;
  private readonly queue: Array<{ grant: () => void }> = [];

  constructor(
    readonly limit: number,
    private readonly serverUrl = "",
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`prompt cap must be a positive integer, got ${limit}`);
  }

  /** Runs holding a slot plus runs waiting for one: the load placement compares. */
  get load(): number {
    return this.running + this.queue.length;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves with the release once a slot is free; rejects with the signal's reason, or with an
   * Error naming the wait when `deadline` (epoch ms) passes first.
   */
  acquire(signal?: AbortSignal, deadline = Infinity): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.running < this.limit && this.queue.length === 0) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const enqueuedAt = Date.now();
      const entry = {
        grant: () => {
          cleanup();
          this.running++;
          resolve(this.releaser());
        },
      };
      const leave = (err: Error) => {
        const i = this.queue.indexOf(entry);
        if (i >= 0) this.queue.splice(i, 1);
        cleanup();
        reject(err);
      };
      const onAbort = () => leave(signal?.reason as Error);
      const timer =
        deadline === Infinity
          ? undefined
          : setTimeout(
              () => leave(new PromptQueueTimeoutError(this.serverUrl, Date.now() - enqueuedAt, this.limit)),
              Math.max(0, deadline - Date.now()),
            );
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(entry);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.queue.shift()?.grant();
    };
  }
}
