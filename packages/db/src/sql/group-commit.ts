/**
 * Group commit: items arriving while fewer than `maxInFlight` writes are under way are written at
 * once (those of one tick together); items arriving while they are wait and go together in the next write (one statement, one
 * commit for all of them). Each caller's promise settles with its own outcome.
 */
export interface GroupCommitOptions<I, O> {
  /**
   * Writes a batch and returns one outcome per item, in order. A throw fails every item of the
   * batch with that error (an outage); a failure of one item alone belongs in its outcome.
   */
  write(items: readonly I[]): Promise<PromiseSettledResult<O>[]>;
  /**
   * Items with the same key are never in one batch: each waits until the one before it has
   * settled, so they are written one after another in order of arrival.
   */
  keyOf?(item: I): unknown;
  maxBatch: number;
  maxInFlight: number;
}

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export function createGroupCommit<I, O>(options: GroupCommitOptions<I, O>): (item: I) => Promise<O> {
  const { write, keyOf, maxBatch, maxInFlight } = options;
  let ready: Pending<I, O>[] = [];
  /** Per key with an item ready or being written: the items queued behind it. */
  const behind = new Map<unknown, Pending<I, O>[]>();
  let inFlight = 0;

  function release(pending: Pending<I, O>): void {
    if (!keyOf) return;
    const key = keyOf(pending.item);
    const next = behind.get(key)?.shift();
    if (next) ready.push(next);
    else behind.delete(key);
  }

  async function run(batch: Pending<I, O>[]): Promise<void> {
    let outcomes: PromiseSettledResult<O>[];
    try {
      outcomes = await write(batch.map((p) => p.item));
      if (outcomes.length !== batch.length) throw new Error("group commit: one outcome per item expected");
    } catch (error) {
      outcomes = batch.map(() => ({ status: "rejected", reason: error }));
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      release(pending);
      if (outcome.status === "fulfilled") pending.resolve(outcome.value);
      else pending.reject(outcome.reason);
    });
  }

  function flush(): void {
    while (inFlight < maxInFlight && ready.length > 0) {
      const batch = ready.slice(0, maxBatch);
      ready = ready.slice(maxBatch);
      inFlight++;
      void run(batch).finally(() => {
        inFlight--;
        flush();
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
      // Items asked for in the same tick go together even when a write could start at once.
      if (ready.length === 1) queueMicrotask(flush);
    });
}
