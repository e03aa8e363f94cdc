import { followUpJobId } from "@ratatoskr/contracts";

/**
 * Job id of the n-th (0-based) notify effect of a transition: `<taskId>-notify-<version>`,
 * then `<taskId>-notify-2-<version>`, … so several notices of one step stay distinct and stable.
 */
export function notifyJobId(task: { id: number; version: number }, index: number): string {
  return followUpJobId(task.id, index === 0 ? "notify" : `notify-${index + 1}`, task.version);
}
