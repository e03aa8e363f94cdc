/**
 * Group commit: items arriving while fewer than `maxInFlight` writes are under way are written at
 * once (those asked for in one tick together); items arriving while they are wait and go together
 * in the next write (one statement, one commit for all of them). Each caller's promise settles
 * with its own outcome.
 */
export interface GroupCommitOptions<I, O> {
  /**
   * Writes a batch; resolves once its statement is done, with one outcome per item, in order. An
   * outcome may still be pending (an item that needs more work on its own): the next batch does
   * not wait for it. A throw fails every item of the batch with that error (an outage).
   */
  write(items: readonly I[]): Promise<Promise<O>[]>;
  /**
   * Items with the same key are never in one batch: each waits until the one before it has
   * settled, so they are written one after another in order of arrival.
   */
  keyOf?(item: I): unknown;
  maxBatch: number;
  maxInFlight: number;
  /**
   * Flush once the event loop's current turn has run its I/O callbacks (setImmediate), not at the
   * end of the caller's tick: items from answers that arrived together (other timers, sockets)
   * join the batch, for up to one loop turn of delay.
   */
  gatherTurn?: boolean;
}

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export function createGroupCommit<I, O>(options: GroupCommitOptions<I, O>): (item: I) => Promise<O> {
  const { write, keyOf, maxBatch, maxInFlight } = options;
  const schedule = options.gatherTurn ? (run: () => void) => void setImmediate(run) : queueMicrotask;
  let ready: Pending<I, O>[] = [];
  /** Per key with an item ready or being written: the items queued behind it. */
  const behind = new Map<unknown, Pending<I, O>[]>();
  let inFlight = 0;
  let flushQueued = false;

  /** Flushes once the current tick's (or turn's) callers and settlements are all in, so they batch together. */
  function queueFlush(): void {
    if (flushQueued) return;
    flushQueued = true;
    schedule(() => {
      flushQueued = false;
      flush();
    });
  }

  function release(pending: Pending<I, O>): void {
    if (!keyOf) return;
    const key = keyOf(pending.item);
    const next = behind.get(key)?.shift();
    if (next) ready.push(next);
    else behind.delete(key);
    queueFlush();
  }

  async function run(batch: Pending<I, O>[]): Promise<void> {
    let outcomes: Promise<O>[];
    try {
      outcomes = await write(batch.map((p) => p.item));
      if (outcomes.length !== batch.length) throw new Error("group commit: one outcome per item expected");
    } catch (error) {
      outcomes = batch.map(() => Promise.reject(error));
    }
    batch.forEach((pending, i) => {
      outcomes[i]!.then(
        (value) => {
          release(pending);
          pending.resolve(value);
        },
        (error: unknown) => {
          release(pending);
          pending.reject(error);
        },
      );
    });
  }

  function flush(): void {
    while (inFlight < maxInFlight && ready.length > 0) {
      const batch = ready.slice(0, maxBatch);
      ready = ready.slice(maxBatch);
      inFlight++;
      void run(batch).finally(() => {
        inFlight--;
        queueFlush();
      });
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      const pending = { item, resolve, reject };
      const key = keyOf?.(item);
      const queue = keyOf ? behind.get(key) : undefined;
      if (queue) {
        queue.push(pending);
        return;
      }
      if (keyOf) behind.set(key, []);
      ready.push(pending);
      queueFlush();
    });
}
