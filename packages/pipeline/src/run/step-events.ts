import { reviewFindingSchema, type ReviewFinding } from "@ratatoskr/contracts";
import { z } from "zod";

/** A stored transition as `task_events` holds it. */
export interface StoredEvent {
  type: string;
  version: number;
  payload: unknown;
}

const JOB_ID = /^(\d+)-([a-z][a-z0-9-]*)-(\d+)$/;

/**
 * True when one of `settledBy` was applied after this job was enqueued (`<taskId>-<step>-<version>`):
 * the job's step already reported back and it runs again only because its worker died after the
 * report (a stalled job). Job ids of another shape (added by hand) are never stale.
 */
export function isStepSettled(
  jobId: string | undefined,
  taskId: number,
  events: readonly StoredEvent[],
  settledBy: readonly string[],
): boolean {
  const match = JOB_ID.exec(jobId ?? "");
  if (!match || Number(match[1]) !== taskId) return false;
  const requestedAt = Number(match[3]);
  return events.some((event) => settledBy.includes(event.type) && event.version > requestedAt);
}

const rejectedPayload = z.object({ findings: z.array(reviewFindingSchema) });
const finishedPayload = z.object({ commit: z.string() });

/** The findings of the latest rejected review: what the next dev round must address. */
export function latestFindings(events: readonly StoredEvent[]): ReviewFinding[] {
  const rejected = events.filter((event) => event.type === "review.rejected").at(-1);
  const parsed = rejectedPayload.safeParse(rejected?.payload);
  return parsed.success ? parsed.data.findings : [];
}

/** The pushed head the latest dev round reported (`abc1234`, or `owner/a@abc1234, owner/b@def5678`). */
export function latestDevCommit(events: readonly StoredEvent[]): string | undefined {
  const finished = events.filter((event) => event.type === "dev.finished").at(-1);
  const parsed = finishedPayload.safeParse(finished?.payload);
  return parsed.success ? parsed.data.commit : undefined;
}
