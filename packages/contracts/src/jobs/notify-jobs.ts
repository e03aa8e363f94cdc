import { createHash } from "node:crypto";
import { QUEUE } from "../queues.ts";
import type { JobRequest } from "./job-catalog.ts";
import { NOTIFY_MESSAGES_PER_JOB, type NotifyTarget } from "./job-schemas.ts";

/**
 * Job id of a v2 notify job, from the messages it carries: the same messages packed the same way
 * give the same id (a repeated enqueue is a no-op), a different packing another one.
 */
export function notifyMessagesJobId(targets: readonly NotifyTarget[]): string {
  const ids = targets.map((t) => t.notificationId);
  const digest = createHash("sha1").update(ids.join(",")).digest("hex").slice(0, 12);
  return `messages-${ids[0] ?? 0}-${ids.length}-${digest}`;
}

/**
 * v2 notify jobs for stored messages, oldest first, at most NOTIFY_MESSAGES_PER_JOB a job: the
 * notifier then pays one job, one lease call and one claim statement per pack, not per message.
 * Built unchecked: the shape is fixed here and the queue's enqueue checks it once.
 */
export function notifyMessagesJobs(targets: readonly NotifyTarget[]): JobRequest<typeof QUEUE.notify>[] {
  const ordered = [...targets].sort((a, b) => a.notificationId - b.notificationId);
  const jobs: JobRequest<typeof QUEUE.notify>[] = [];
  for (let i = 0; i < ordered.length; i += NOTIFY_MESSAGES_PER_JOB) {
    const messages = ordered.slice(i, i + NOTIFY_MESSAGES_PER_JOB);
    jobs.push({ queue: QUEUE.notify, data: { v: 2, kind: "messages", messages }, jobId: notifyMessagesJobId(messages) });
  }
  return jobs;
}
