/** What a sweep does about one task that waits on a job. */
export type SweepAction =
  /** The job is gone (Redis lost it): put it back under its own id. */
  | "requeue"
  /** The job ended outside its handler (stalled limit, attempts exhausted): settle the task, saying why. */
  | "release"
  /** The job is on its way (waiting, delayed, running) or too young to judge. */
  | "leave";

export interface AwaitedJob {
  /** The follow-up was put on its queue (not yet: the follow-up reconciler's business). */
  dispatched: boolean;
  /** Since the follow-up was written, in ms. */
  ageMs: number;
  /** BullMQ's view of the job (`getJobState`); "unknown" when Redis does not hold it. */
  state: string;
}

/**
 * Postgres says the task waits on the job; this decides from BullMQ's answer. A job younger than
 * `graceMs` is left alone: it may be between its commit and its enqueue, or just finishing.
 */
export function sweepAction(job: AwaitedJob, graceMs: number): SweepAction {
  if (!job.dispatched || job.ageMs < graceMs) return "leave";
  switch (job.state) {
    case "unknown":
      return "requeue";
    case "failed":
    case "completed":
      // A finished job always reports back; a task still waiting on one was left behind.
      return "release";
    default:
      return "leave";
  }
}
