import type { Redis } from "@ratatoskr/runtime";

/** Remembers which chats were already told "not allowed", so each hears it once (T2). */
export interface RefusedChats {
  /** True the first time a chat is refused, false ever after. */
  firstRefusal(chatId: number): Promise<boolean>;
}

/**
 * Kept in Redis: it is cheap, shared by every ingress replica, and losing it only costs one
 * more refusal message, never a task.
 */
export function redisRefusedChats(redis: Redis, prefix: string): RefusedChats {
  const key = `${prefix}:telegram:refused-chats`;
  return {
    async firstRefusal(chatId) {
      return (await redis.sadd(key, String(chatId))) === 1;
    },
  };
}
