/** `<taskId>-analyst-<version>`: the task version at which the reducer asked for this analysis. */
const ANALYSIS_JOB_ID = /^(\d+)-analyst-(\d+)$/;

/**
 * True when an analyst event was applied after this job was enqueued, i.e. this job's analysis
 * already reported back and the job runs again only because its worker died before finishing
 * it (a stalled job). Without this check it would run beside the follow-up analysis that its
 * own report enqueued. Job ids of another shape (enqueued by hand) are never stale.
 */
export function isAnalysisAlreadySettled(
  jobId: string | undefined,
  taskId: number,
  events: ReadonlyArray<{ type: string; version: number }>,
): boolean {
  const match = ANALYSIS_JOB_ID.exec(jobId ?? "");
  if (!match || Number(match[1]) !== taskId) return false;
  const requestedAt = Number(match[2]);
  return events.some((event) => event.type.startsWith("analyst.") && event.version > requestedAt);
}
