import { notifyMessagesJobs, QUEUE, QUEUE_NAMES, type AnyJobRequest, type NotifyTarget, type QueueName } from "@ratatoskr/contracts";
import type { FollowUp } from "../../generated/client.ts";

function isQueueName(queue: string): queue is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(queue);
}

/**
 * The job an outbox row stands for. Not re-validated here: the queue's enqueue checks the payload
 * against its consumer's schema, once, and a row that fails it stays for the reconciler.
 */
export function toJobRequest(row: Pick<FollowUp, "queue" | "jobId" | "data">): AnyJobRequest {
  if (!isQueueName(row.queue)) throw new Error(`follow-up ${row.jobId} names unknown queue "${row.queue}"`);
  return { queue: row.queue, data: row.data, jobId: row.jobId } as AnyJobRequest;
}

/** A v1 Telegram message row with its chat and message ids: what can ride in a v2 notify job. */
function telegramMessage(row: Pick<FollowUp, "queue" | "data">): NotifyTarget | undefined {
  if (row.queue !== QUEUE.notify) return undefined;
  const data = row.data as { v?: unknown; kind?: unknown; notificationId?: unknown; chatId?: unknown } | null;
  if (data?.v !== 1 || data.kind !== "message") return undefined;
  const { notificationId, chatId } = data;
  if (typeof notificationId !== "number" || typeof chatId !== "number") return undefined;
  return { notificationId, chatId };
}

/**
 * The jobs one dispatch of `rows` puts out: each row its own job, except that the Telegram
 * messages of several rows (a burst of transitions, a reconciler pass) go several to a v2 notify
 * job, so the notifier pays its per-job costs once per pack. A row re-dispatched alone later
 * (its mark lost) gets its own job; the notifier skips a message already sent.
 */
export function packFollowUps(rows: readonly Pick<FollowUp, "queue" | "jobId" | "data">[]): AnyJobRequest[] {
  const messages = rows.map(telegramMessage);
  const packable = messages.filter((m): m is NotifyTarget => m !== undefined);
  if (packable.length < 2) return rows.map(toJobRequest);
  return [...rows.filter((_, i) => messages[i] === undefined).map(toJobRequest), ...notifyMessagesJobs(packable)];
}
