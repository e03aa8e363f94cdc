/** A stored transition, as `task_events` holds it. */
export interface FailureEventCandidate {
  version: number;
  type: string;
  toStatus: string;
  payload: unknown;
  createdAt: Date;
}

const JOB_ID = /^(\d+)-postmortem-(\d+)$/;

/**
 * The transition this postmortem explains: the one that made the task `cause` at the version in
 * the job id (`<taskId>-postmortem-<version>`), else the latest one into `cause`. A task can fail,
 * be retried and fail again; each failure gets its own postmortem.
 */
export function findFailureEvent<E extends FailureEventCandidate>(
  events: readonly E[],
  cause: "failed" | "timeout",
  jobId: string | undefined,
  taskId: number,
): E | undefined {
  const into = events.filter((event) => event.toStatus === cause);
  const match = JOB_ID.exec(jobId ?? "");
  if (match && Number(match[1]) === taskId) {
    const exact = into.find((event) => event.version === Number(match[2]));
    if (exact) return exact;
  }
  return into.at(-1);
}

/** The reason recorded with a `run.failed` transition, if any. */
export function failureReason(event: FailureEventCandidate): string | null {
  const payload = event.payload as { reason?: unknown } | null;
  return typeof payload?.reason === "string" && payload.reason.trim() !== "" ? payload.reason : null;
}
