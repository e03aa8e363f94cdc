import type { Redis } from "@ratatoskr/runtime";

/** Remembers which chats were already told "not allowed", so each hears it once (T2). */
export interface RefusedChats {
  /** True the first time a chat is refused (within the memory's lifetime), false after. */
  firstRefusal(chatId: number): Promise<boolean>;
}

/** A refused chat is told again after a day at most: the memory of strangers does not grow forever. */
export const REFUSAL_MEMORY_SEC = 24 * 60 * 60;

/**
 * Kept in Redis, one expiring key per chat: cheap, shared by every ingress replica, bounded
 * (every key expires), and losing it only costs one more refusal message, never a task.
 */
export function redisRefusedChats(redis: Redis, prefix: string, ttlSec = REFUSAL_MEMORY_SEC): RefusedChats {
  return {
    async firstRefusal(chatId) {
      const key = `${prefix}:telegram:refused:${chatId}`;
      return (await redis.set(key, "1", "EX", ttlSec, "NX")) === "OK";
    },
  };
}
