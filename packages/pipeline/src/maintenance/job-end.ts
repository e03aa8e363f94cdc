/**
 * Why a job ended without its handler reporting back, as far as BullMQ remembers it. The sweep
 * settles such a task; what the person then reads must be this, not a guess.
 */
export type JobEnd =
  /** Its worker process died (killed, crashed, out of memory) mid-run, again and again. */
  | { kind: "worker-died"; attempts: number }
  /** Every attempt threw; `lastError` is the last one's message, retry wrappers removed. */
  | { kind: "attempts-exhausted"; attempts: number; lastError: string }
  /** It completed, or Redis no longer remembers how it ended. */
  | { kind: "no-report" };

/** The part of a BullMQ job this reads (`Queue.getJob`). */
export interface EndedJob {
  failedReason?: string | undefined;
  attemptsMade: number;
  attemptsStarted?: number | undefined;
}

/** BullMQ's own words when a job's worker stopped renewing its lock too often (stalled or restarted). */
const WORKER_DIED = /(stalled|started) more than allowable limit/;

/** "analysis run failed, will retry: X" → "X": the job's last error, as the person should read it. */
export function withoutRetryWrapper(message: string): string {
  return message.replace(/^.*?,? will retry: /, "");
}

export function jobEndOf(job: EndedJob | undefined | null, state: string): JobEnd {
  if (!job || state !== "failed" || !job.failedReason) return { kind: "no-report" };
  const attempts = Math.max(job.attemptsMade, job.attemptsStarted ?? 0);
  if (WORKER_DIED.test(job.failedReason)) return { kind: "worker-died", attempts };
  return { kind: "attempts-exhausted", attempts, lastError: withoutRetryWrapper(job.failedReason).slice(0, 500) };
}

/** Reads the job (missing: `no-report`) and says how it ended. */
export async function readJobEnd(
  queue: { getJob(id: string): Promise<EndedJob | undefined | null> },
  jobId: string,
  state: string,
): Promise<JobEnd> {
  return jobEndOf(await queue.getJob(jobId).catch(() => undefined), state);
}

/** What the person reads: `step` is e.g. "dev round", "review". */
export function jobEndReason(step: string, end: JobEnd): string {
  switch (end.kind) {
    case "worker-died":
      return `the ${step} was cut off: the process running it died ${end.attempts > 1 ? `${end.attempts} times in a row` : "mid-run"} (killed or crashed)`;
    case "attempts-exhausted":
      return `the ${step} gave up after ${end.attempts} attempt${end.attempts === 1 ? "" : "s"}: ${end.lastError}`;
    case "no-report":
      return `the ${step} ended without reporting back`;
  }
}
