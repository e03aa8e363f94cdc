import { randomUUID } from "node:crypto";
import type { Redis } from "@ratatoskr/runtime";

/** Deletes / extends the key only while it still holds our token, so a lock that expired and was taken by another job is never touched. */
const RELEASE_SCRIPT = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;
const EXTEND_SCRIPT = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end return 0`;

/** Held while one job sends a chat's messages; short-lived and renewed per message. */
export interface ChatLease {
  readonly chatId: number;
  /** Renews the lease; false when it expired and may belong to another job now. */
  extend(): Promise<boolean>;
  release(): Promise<void>;
}

export interface ChatLockOptions {
  redis: Redis;
  /** QUEUE_PREFIX: locks live beside the queues and go with them. */
  prefix: string;
  /** Expiry that frees the chat if the holder dies; renewed before every message. */
  ttlMs: number;
}

/**
 * One sender per chat at a time, across every notifier replica: `SET NX PX` with a random token,
 * released and renewed by compare-and-set scripts. The holder sends the chat's messages in id
 * order, which is what keeps them in order.
 */
export class ChatLocks {
  constructor(private readonly options: ChatLockOptions) {}

  async acquire(chatId: number): Promise<ChatLease | null> {
    const { redis, ttlMs } = this.options;
    const key = `${this.options.prefix}:notifier:chat-lock:${chatId}`;
    const token = randomUUID();
    const taken = await redis.set(key, token, "PX", ttlMs, "NX");
    if (taken !== "OK") return null;
    return {
      chatId,
      extend: async () => (await redis.eval(EXTEND_SCRIPT, 1, key, token, String(ttlMs))) === 1,
      release: async () => {
        await redis.eval(RELEASE_SCRIPT, 1, key, token);
      },
    };
  }
}
