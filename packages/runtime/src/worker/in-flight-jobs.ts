import type { Job } from "bullmq";
import type { Logger } from "pino";

export class HandBackError extends Error {
  override readonly name = "HandBackError";
}

/**
 * One running job. A class rather than closures: this is made for every job, and per-job
 * allocations (an AbortSignal, a never-settling promise raced against the handler) cost more than
 * the rest of the wrapper. The signal exists only once a handler reads it; the handler's promise
 * is wrapped once, so a hand-back can end the attempt early.
 */
export class RunningJob {
  private controller: AbortController | undefined;
  /** Why the job must stop (a cancel's reason or the hand-back), kept for a signal made later. */
  private stopReason: unknown;
  private stopped = false;
  private rejectRun: ((err: Error) => void) | undefined;
  private handBackPromise: Promise<void> | undefined;

  constructor(
    private readonly job: Job,
    private readonly token: string | undefined,
    private readonly logger: Logger,
  ) {}

  /** Aborted when the job is cancelled or handed back. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopped) this.controller.abort(this.stopReason);
    }
    return this.controller.signal;
  }

  /** Set as soon as a hand-back starts (before the job is moved). */
  get isHandedBack(): boolean {
    return this.handBackPromise !== undefined;
  }

  /** Resolves when a started hand-back has finished moving the job. */
  get handBackDone(): Promise<void> {
    return this.handBackPromise ?? Promise.resolve();
  }

  /** The handler's result, or a HandBackError once the job is back in `wait`. */
  run<T>(handling: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.rejectRun = reject;
      handling.then(resolve, reject);
    });
  }

  cancel(reason: unknown): void {
    this.stop(reason);
  }

  handBack(reason: string): Promise<void> {
    this.handBackPromise ??= (async () => {
      const err = new HandBackError(reason);
      this.stop(err);
      try {
        await this.job.moveToWait(this.token);
      } catch (moveErr) {
        // The lock is no longer renewed, so BullMQ's stalled check returns the job later.
        this.logger.warn(
          { err: moveErr, jobId: this.job.id },
          "could not hand job back; it returns when its lock expires",
        );
      }
      this.rejectRun?.(err);
    })();
    return this.handBackPromise;
  }

  private stop(reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopReason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * The jobs this worker is running, so that at the end of the shutdown grace period they can be
 * handed back to `wait` at once — another worker resumes them immediately, the attempt is not
 * counted as a failure, and no stalled-job lock has to expire first.
 */
export class InFlightJobs {
  private readonly entries = new Map<string, RunningJob>();

  constructor(private readonly logger: Logger) {}

  get size(): number {
    return this.entries.size;
  }

  start(job: Job, token: string | undefined): RunningJob {
    const running = new RunningJob(job, token, this.logger);
    if (job.id !== undefined) this.entries.set(job.id, running);
    return running;
  }

  finish(job: Job): void {
    if (job.id !== undefined) this.entries.delete(job.id);
  }

  /** Aborts a running job's signal; false when this worker is not running it. */
  cancel(jobId: string, reason: unknown): boolean {
    const running = this.entries.get(jobId);
    running?.cancel(reason);
    return running !== undefined;
  }

  async handBackAll(reason: string): Promise<number> {
    const entries = [...this.entries.values()];
    await Promise.all(entries.map((entry) => entry.handBack(reason)));
    return entries.length;
  }
}
