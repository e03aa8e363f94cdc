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
    private readonly fetchActive: () => Promise<Set<string>>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A snapshot whose request started strictly after `after` (epoch ms). */
  async snapshotAfter(after: number): Promise<ActiveSnapshot> {
    if (this.latest && this.latest.startedAt > after) return this.latest;
    if (this.inflight && this.inflight.startedAt > after) return this.inflight.promise;
    if (this.inflight) {
      // Too old for this caller: wait for it to finish, then issue a fresh one (shared again).
      await this.inflight.promise.catch(() => undefined);
      return this.snapshotAfter(after);
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
    this.inflight = { startedAt, promise };
    try {
      return await promise;
    } finally {
      if (this.inflight?.promise === promise) this.inflight = undefined;
    }
  }
}
