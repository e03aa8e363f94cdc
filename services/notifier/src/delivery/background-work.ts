/**
 * Work a job hands off as it ends, such as freeing its chat's lease: the job's worker slot is
 * free a round trip sooner, and shutdown waits for what is still running before it closes Redis.
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();

  /** `work` must handle its own errors; a rejection is dropped here. */
  add(work: Promise<unknown>): void {
    const tracked: Promise<void> = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** Resolves once nothing handed off is still running (work added meanwhile included). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
