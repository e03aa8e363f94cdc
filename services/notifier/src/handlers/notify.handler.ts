import type { NotifyTarget } from "@ratatoskr/contracts";
import type { JobContext, JobHandler, SkippedResult } from "@ratatoskr/runtime";
import { PermanentError, RetryLaterError, skipped } from "@ratatoskr/runtime";
import { deliverChatBatch, type BatchMessageOutcome, type ChatBatchDeps } from "../delivery/chat-batch.ts";
import { ChatSendError } from "../delivery/chat-drain.ts";
import type { GiteaStatusHandler } from "../gitea/gitea-status.handler.ts";

export interface NotifyHandlerDeps extends ChatBatchDeps {
  /** How long a job waits before trying a chat whose lease another job holds. */
  busyChatRetryMs: number;
  /** Reconciles a Gitea command's status comment (`gitea-status` jobs). */
  giteaStatus?: GiteaStatusHandler;
}

/** What a v1 `message` job reports when it delivered its own notification. */
export interface SentResult {
  status: "sent";
  notificationId: number;
  messageIds: number[];
}

/** What a v2 `messages` job reports: each message's outcome by id (`sent`, `dropped`, `uncertain`, `already sent` …). */
export interface BatchResult {
  status: "delivered";
  messages: Record<number, string>;
}

/** Spreads retries of jobs waiting for one busy chat, so they do not all wake at once. */
function withJitter(ms: number): number {
  return ms + Math.floor(Math.random() * (ms / 2));
}

const STILL_TO_SEND: ReadonlySet<BatchMessageOutcome["kind"]> = new Set(["waiting", "retry-after", "transient", "resend"]);

/**
 * A v1 job queued before it carried its chat: the chat comes from the stored message, which also
 * settles at once a job whose message is already handled or is no Telegram message.
 */
async function chatOf(deps: NotifyHandlerDeps, notificationId: number): Promise<number | SkippedResult> {
  const notification = await deps.notifications.findById(notificationId);
  if (!notification) return skipped(`notification ${notificationId} does not exist`);
  if (notification.channel !== "telegram" || notification.chatId === null) {
    await deps.notifications.markFailed(notificationId, "not a Telegram message: no chat to send to");
    throw new PermanentError(`notification ${notificationId} has no Telegram chat`);
  }
  // `sending` may be a send whose notifier died: the drain settles it under the chat's lease.
  if (notification.status !== "pending" && notification.status !== "sending") {
    return skipped(`notification ${notificationId} is already ${notification.status}`);
  }
  return Number(notification.chatId);
}

/**
 * Delivers a job's messages (see deliverChatBatch) and decides what the job does next: while any
 * is still to send it is retried — after a transient send failure with backoff (an attempt), else
 * (a 429 hold, a busy chat) after the soonest wait without using an attempt; an outage or other
 * error of a chat is thrown as it is. Settled messages are skipped by a retry.
 */
async function deliver(
  deps: NotifyHandlerDeps,
  messages: readonly NotifyTarget[],
  { job, logger, signal }: JobContext<"notify">,
): Promise<Map<number, BatchMessageOutcome>> {
  const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const { outcomes, stopped } = await deliverChatBatch(deps, { messages, finalAttempt, signal, logger });
  const errors = [...stopped.values()];
  const other = errors.find((e) => !(e instanceof RetryLaterError || e instanceof ChatSendError));
  if (other !== undefined) throw other;
  const left = [...outcomes].filter(([, outcome]) => STILL_TO_SEND.has(outcome.kind));
  if (left.length === 0) return outcomes;
  const failed = errors.find((e) => e instanceof ChatSendError);
  if (failed) throw failed;
  const holds = errors.filter((e): e is RetryLaterError => e instanceof RetryLaterError);
  const busy = left.some(([, outcome]) => outcome.kind === "waiting");
  const waits = [...holds.map((e) => e.delayMs), ...(busy ? [withJitter(deps.busyChatRetryMs)] : [])];
  const [first] = left;
  const reason =
    holds[0]?.message ?? (first && first[1].kind === "waiting" ? first[1].reason : `notification ${first?.[0]} waits`);
  throw new RetryLaterError(Math.min(...waits), left.length > 1 ? `${left.length} messages wait; ${reason}` : reason);
}

/** The v1 result of a job's one message, as it always was. */
function singleResult(notificationId: number, outcome: BatchMessageOutcome | undefined): unknown {
  switch (outcome?.kind) {
    case "sent":
      return { status: "sent", notificationId, messageIds: outcome.messageIds } satisfies SentResult;
    case "dropped":
      return skipped(`notification ${notificationId} dropped: ${outcome.reason}`);
    case "uncertain":
      return skipped(`notification ${notificationId} may have been delivered; recorded as uncertain`);
    case "failed":
      throw new PermanentError(`notification ${notificationId} failed: ${outcome.error}`);
    case "settled-elsewhere":
      return skipped(
        outcome.status === "missing"
          ? `notification ${notificationId} does not exist`
          : `notification ${notificationId} is already ${outcome.status}`,
      );
    default:
      throw new Error(`notification ${notificationId}: no outcome`);
  }
}

function describe(outcome: BatchMessageOutcome): string {
  if (outcome.kind === "settled-elsewhere") return outcome.status === "missing" ? "missing" : `already ${outcome.status}`;
  return outcome.kind;
}

/** The result of a v2 job once every message is settled; failed messages fail the job, naming them. */
function batchResult(outcomes: ReadonlyMap<number, BatchMessageOutcome>): BatchResult | SkippedResult {
  const failed = [...outcomes].filter(([, o]) => o.kind === "failed");
  if (failed.length > 0) {
    const list = failed.map(([id, o]) => `${id}: ${o.kind === "failed" ? o.error : ""}`).join("; ");
    throw new PermanentError(`${failed.length} of ${outcomes.size} notifications failed (${list})`);
  }
  const messages = Object.fromEntries([...outcomes].map(([id, o]) => [id, describe(o)]));
  if (![...outcomes.values()].some((o) => o.kind === "sent")) {
    return skipped(`nothing sent: ${Object.values(messages).join(", ")}`);
  }
  return { status: "delivered", messages };
}

/**
 * The `notify` queue's handler. A v1 `message` job delivers one stored notification, a v2
 * `messages` job several, of one or more chats. Each chat's lease is taken and every unsettled
 * message of that chat sent oldest first, so messages arrive in the order they were created
 * whichever job runs first (and a job whose process died is not needed for the chat to go on).
 * Messages already handled are skipped; a busy chat or a 429 delays the job without using an attempt.
 */
export function createNotifyHandler(deps: NotifyHandlerDeps): JobHandler<"notify"> {
  return async (data, context) => {
    switch (data.kind) {
      case "gitea-status":
        if (!deps.giteaStatus)
          throw new PermanentError(`gitea status comments are off in this notifier (task ${data.taskId})`);
        return deps.giteaStatus(data.taskId);
      case "messages":
        return batchResult(await deliver(deps, data.messages, context));
      case "message": {
        const chatId = data.chatId ?? (await chatOf(deps, data.notificationId));
        if (typeof chatId !== "number") return chatId;
        const outcomes = await deliver(deps, [{ notificationId: data.notificationId, chatId }], context);
        return singleResult(data.notificationId, outcomes.get(data.notificationId));
      }
    }
  };
}
