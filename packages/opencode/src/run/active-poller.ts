/** One observation of the server's running sessions. */
export interface ActiveSnapshot {
  /** Epoch ms when the request was sent (an observation is "after" this instant). */
  startedAt: number;
  ids: Set<string>;
}

/** Snapshot requests one client keeps in flight at most (per server). */
const MAX_IN_FLIGHT = 2;

/**
 * Shares `GET /api/session/active` between every run on a client: a caller asks for a snapshot
 * taken after some instant, and all callers waiting at the same time share one request. A caller
 * that needs a newer snapshot than the one in flight does not wait for it to come back first: a
 * second request starts at once (a watcher woken by a turn's end confirms it one round trip
 * sooner), never more than MAX_IN_FLIGHT, so a stalled server is not piled on.
 */
export class ActivePoller {
  private latest: ActiveSnapshot | undefined;
  private readonly inflight: Array<{ startedAt: number; promise: Promise<ActiveSnapshot> }> = [];

  constructor(
    private readonly fetchActive: (signal?: AbortSignal) => Promise<Set<string>>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A snapshot whose request started strictly after `after` (epoch ms). `signal` ends this
   * caller's wait (the shared request goes on for the others).
   */
  async snapshotAfter(after: number, signal?: AbortSignal): Promise<ActiveSnapshot> {
    return signal ? abortable(this.shared(after), signal) : this.shared(after);
  }

  private async shared(after: number): Promise<ActiveSnapshot> {
    if (this.latest && this.latest.startedAt > after) return this.latest;
    const newest = this.inflight.at(-1);
    if (newest && newest.startedAt > after) return newest.promise;
    if (this.inflight.length >= MAX_IN_FLIGHT) {
      // Too old for this caller and no room for another: wait for the oldest, then ask again.
      await this.inflight[0]?.promise.catch(() => undefined);
      return this.shared(after);
    }
    let startedAt = this.now();
    if (startedAt <= after) startedAt = after + 1; // clocks with ms granularity
    const promise = this.fetchActive().then((ids) => {
      const snap = { startedAt, ids };
      if (!this.latest || this.latest.startedAt < startedAt) this.latest = snap;
      return snap;
    });
    promise.catch(() => undefined); // every waiter may have left: a failure must not go unhandled
    const entry = { startedAt, promise };
    this.inflight.push(entry);
    try {
      return await promise;
    } finally {
      this.inflight.splice(this.inflight.indexOf(entry), 1);
    }
  }
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (the promise runs on). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined); // once the caller has left, a later failure is nobody's to see
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
