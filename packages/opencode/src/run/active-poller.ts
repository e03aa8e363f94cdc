/** One observation of the server's running sessions. */
export interface ActiveSnapshot {
  /** Epoch ms when the request was sent (an observation is "after" this instant). */
  startedAt: number;
  ids: Set<string>;
}

/**
 * Shares `GET /api/session/active` between every run on a client: a caller asks for a snapshot
 * taken after some instant, and all callers waiting at the same time share one request.
 */
export class ActivePoller {
  private latest: ActiveSnapshot | undefined;
  private inflight: { startedAt: number; promise: Promise<ActiveSnapshot> } | undefined;

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
    if (this.inflight && this.inflight.startedAt > after) return this.inflight.promise;
    if (this.inflight) {
      // Too old for this caller: wait for it to finish, then issue a fresh one (shared again).
      await this.inflight.promise.catch(() => undefined);
      return this.shared(after);
    }
    let startedAt = this.now();
    if (startedAt <= after) startedAt = after + 1; // clocks with ms granularity
    const promise = this.fetchActive().then(
      (ids) => {
        const snap = { startedAt, ids };
        if (!this.latest || this.latest.startedAt < startedAt) this.latest = snap;
        return snap;
      },
    );
    promise.catch(() => undefined); // every waiter may have left: a failure must not go unhandled
    this.inflight = { startedAt, promise };
    try {
      return await promise;
    } finally {
      if (this.inflight?.promise === promise) this.inflight = undefined;
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
