/**
 * Deterministic job id `<taskId>-<step>-<seq>`. BullMQ rejects ":" in custom ids, hence "-".
 * `seq` is the task's version after the transition that caused the job, so a replayed
 * enqueue of the same follow-up collapses into the existing job.
 */
export function followUpJobId(taskId: number, step: string, seq: number): string {
  if (!/^[a-z][a-z0-9-]*$/.test(step)) throw new Error(`job step must be kebab-case, got "${step}"`);
  return `${taskId}-${step}-${seq}`;
}

/** Job id of the notify job for one stored notification that no transition produced (a reply). */
export function notificationJobId(notificationId: number): string {
  return `notification-${notificationId}`;
}
