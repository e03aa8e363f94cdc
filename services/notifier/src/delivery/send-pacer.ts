import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "@ratatoskr/runtime";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";

/** The slot is further away than a job should sit waiting (a 429 hold): come back later. */
export class SlotDeferredError extends Error {
  override readonly name = "SlotDeferredError";
  constructor(readonly waitMs: number) {
    super(`next send slot in ${waitMs} ms`);
  }
}

export interface SendPacer {
  /**
   * Resolves when one more message may go to `chatId`: within the bot's overall rate and at
   * least one chat interval after the chat's previous message. Waits in place for short gaps;
   * throws SlotDeferredError when the chat is held longer (after a 429).
   */
  takeSlot(chatId: number, signal: AbortSignal): Promise<void>;
  /** Telegram said "retry after": no message to this chat for `waitMs`, on any replica. */
  holdChat(chatId: number, waitMs: number): Promise<void>;
  /**
   * A message just went out as `parts` Telegram messages. The chat's next slot opens a chat
   * interval per part from now: measured from the real send, not from when its slot was taken,
   * and as if each part of a long text had had a slot of its own.
   */
  sent(chatId: number, parts: number): Promise<void>;
}

export interface SendPacerOptions {
  redis: Redis;
  prefix: string;
  globalPerSecond: number;
  /** Whole seconds: rate-limiter-flexible's Redis store keeps windows in seconds. */
  chatIntervalMs: number;
}

/** Gaps up to one chat interval (plus timer slack) are waited out in place. */
const IN_PLACE_SLACK_MS = 250;

/**
 * Telegram's limits, about 30 messages a second overall and one a second per chat, kept with
 * rate-limiter-flexible's Redis store so every notifier replica shares the same counters.
 */
export function createSendPacer(options: SendPacerOptions): SendPacer {
  const { redis, prefix, chatIntervalMs } = options;
  const global = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:notifier:pace-global`,
    points: options.globalPerSecond,
    duration: 1,
    rejectIfRedisNotReady: true,
  });
  const perChat = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:notifier:pace-chat`,
    points: 1,
    duration: chatIntervalMs / 1_000,
    rejectIfRedisNotReady: true,
  });
  const maxInPlaceMs = chatIntervalMs + IN_PLACE_SLACK_MS;

  /** Consumes one point, waiting out short rejections. Redis errors propagate (transient). */
  async function take(limiter: RateLimiterRedis, key: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await limiter.consume(key);
        return;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        if (rejection.msBeforeNext > maxInPlaceMs) throw new SlotDeferredError(rejection.msBeforeNext);
        await sleep(Math.max(1, rejection.msBeforeNext), undefined, { signal });
      }
    }
  }

  async function holdChat(chatId: number, waitMs: number): Promise<void> {
    await perChat.block(String(chatId), Math.max(1, Math.ceil(waitMs / 1_000)));
  }

  return {
    async takeSlot(chatId, signal) {
      // Overall first: its waits are short, so the chat's slot is taken right before the send.
      await take(global, "bot", signal);
      await take(perChat, String(chatId), signal);
    },
    holdChat,
    async sent(chatId, parts) {
      if (parts > 0) await holdChat(chatId, parts * chatIntervalMs);
    },
  };
}
