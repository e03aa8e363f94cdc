import type { Job } from "bullmq";
import type { Logger } from "pino";

export interface InFlightJob {
  /** Aborted when the job is handed back. */
  readonly signal: AbortSignal;
  /** Rejects once the job is back in `wait`, so the processor can return without finishing it. */
  readonly handedBack: Promise<never>;
  /** Set as soon as a hand-back starts (before the job is moved). */
  readonly isHandedBack: boolean;
  /** Resolves when a started hand-back has finished moving the job. */
  readonly handBackDone: Promise<void>;
}

export class HandBackError extends Error {
  override readonly name = "HandBackError";
}

interface Entry extends InFlightJob {
  handBack(reason: string): Promise<void>;
}

/**
 * The jobs this worker is running, so that at the end of the shutdown grace period they can be
 * handed back to `wait` at once — another worker resumes them immediately, the attempt is not
 * counted as a failure, and no stalled-job lock has to expire first.
 */
export class InFlightJobs {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly logger: Logger) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * `cancelled` (BullMQ's cancel signal) aborts the job's signal too. The signal, and the listener
   * on `cancelled`, are made only when the handler reads it: most jobs never do, and an
   * AbortSignal plus an event listener per job cost more than the rest of the wrapper.
   */
  start(job: Job, token: string | undefined, cancelled?: AbortSignal): InFlightJob {
    let controller: AbortController | undefined;
    let handBackReason: HandBackError | undefined;
    const signal = (): AbortSignal => {
      if (!controller) {
        controller = new AbortController();
        if (handBackReason) controller.abort(handBackReason);
        else if (cancelled?.aborted) controller.abort(cancelled.reason);
        else if (cancelled) {
          const own = controller;
          cancelled.addEventListener("abort", () => own.abort(cancelled.reason), { once: true });
        }
      }
      return controller.signal;
    };
    let rejectHandedBack: (err: Error) => void = () => {};
    const handedBack = new Promise<never>((_, reject) => {
      rejectHandedBack = reject;
    });
    let handBackDone: Promise<void> | undefined;
    const log = this.logger;
    const entry: Entry = {
      get signal() {
        return signal();
      },
      handedBack,
      get isHandedBack() {
        return handBackDone !== undefined;
      },
      get handBackDone() {
        return handBackDone ?? Promise.resolve();
      },
      handBack(reason) {
        handBackDone ??= (async () => {
          handBackReason = new HandBackError(reason);
          controller?.abort(handBackReason);
          try {
            await job.moveToWait(token);
          } catch (err) {
            // The lock is no longer renewed, so BullMQ's stalled check returns the job later.
            log.warn({ err, jobId: job.id }, "could not hand job back; it returns when its lock expires");
          }
          rejectHandedBack(new HandBackError(reason));
        })();
        return handBackDone;
      },
    };
    if (job.id !== undefined) this.entries.set(job.id, entry);
    return entry;
  }

  finish(job: Job): void {
    if (job.id !== undefined) this.entries.delete(job.id);
  }

  async handBackAll(reason: string): Promise<number> {
    const entries = [...this.entries.values()];
    await Promise.all(entries.map((entry) => entry.handBack(reason)));
    return entries.length;
  }
}
