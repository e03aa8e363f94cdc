import type { Redis } from "@ratatoskr/runtime";

/** Remembers which chats were already told "not allowed", so each hears it once (T2). */
export interface RefusedChats {
  /** True the first time a chat is refused (within the memory's lifetime), false after. */
  firstRefusal(chatId: number): Promise<boolean>;
}

/** A refused chat is told again after a day at most: the memory of strangers does not grow forever. */
export const REFUSAL_MEMORY_SEC = 24 * 60 * 60;

/** How long this process skips Redis for a chat it knows was refused, and for how many chats. */
const LOCAL_MEMORY_MS = 60_000;
const LOCAL_MEMORY_CHATS = 10_000;

/**
 * Kept in Redis, one expiring key per chat: cheap, shared by every ingress replica, bounded
 * (every key expires), and losing it only costs one more refusal message, never a task. A chat
 * known to be refused is also remembered here for a minute (at most the key's own lifetime), so
 * a stranger writing many messages costs one Redis call a minute, not one per message.
 */
export function redisRefusedChats(redis: Redis, prefix: string, ttlSec = REFUSAL_MEMORY_SEC): RefusedChats {
  const localMs = Math.min(LOCAL_MEMORY_MS, ttlSec * 1000);
  const known = new Map<number, number>();
  return {
    async firstRefusal(chatId) {
      const now = Date.now();
      const until = known.get(chatId);
      if (until !== undefined && until > now) return false;
      const key = `${prefix}:telegram:refused:${chatId}`;
      const first = (await redis.set(key, "1", "EX", ttlSec, "NX")) === "OK";
      known.delete(chatId);
      // Oldest first in insertion order: the map never holds more than LOCAL_MEMORY_CHATS.
      if (known.size >= LOCAL_MEMORY_CHATS) known.delete(known.keys().next().value!);
      known.set(chatId, now + localMs);
      return first;
    },
  };
}
