import type { Logger } from "@ratatoskr/runtime";
import { RetryLaterError } from "@ratatoskr/runtime";
import { ChatSendError, drainChat, type ChatDrainDeps } from "./chat-drain.ts";
import type { ChatLocks } from "./chat-lock.ts";

export interface LeftChatDeps extends ChatDrainDeps {
  chatLocks: ChatLocks;
}

/** What a sweep did with one chat. */
export type LeftChatOutcome = "busy" | "drained" | "stopped";

/**
 * A chat a stopped notifier may have left behind, found without waiting for any job of its own:
 * a message claimed for sending, or an untried one stored a while ago. If its lease is free, no
 * live job is sending to it (only a holder claims, and it settles every claim before it lets
 * go): a claimed message is settled as a doubt at once (a must-deliver one is sent again,
 * marked) and the rest of the chat is sent, in order and paced, as a notify job would. A live
 * holder keeps its lease, so its chat comes back `busy`. A 429 or a transient failure stops the
 * drain (`stopped`): the chat's own jobs carry on from there.
 */
export async function drainLeftChat(
  deps: LeftChatDeps,
  chatId: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<LeftChatOutcome> {
  const lease = await deps.chatLocks.acquire(chatId, signal);
  if (!lease) return "busy";
  const log = logger.child({ chatId });
  try {
    await drainChat(deps, { lease, finalAttempt: false, signal, logger: log });
    return "drained";
  } catch (err) {
    if (!(err instanceof RetryLaterError || err instanceof ChatSendError)) throw err;
    log.info({ err: err.message }, "chat left mid-send settled; the rest waits for its jobs");
    return "stopped";
  } finally {
    await lease.release().catch((err: unknown) => log.warn({ err }, "could not release the chat lease"));
  }
}
