import { randomUUID } from "node:crypto";
import type { Redis } from "@ratatoskr/runtime";

/** Deletes / extends the key only while it still holds our token, so a lock that expired and was taken by another job is never touched. */
const RELEASE_SCRIPT = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;
const EXTEND_SCRIPT = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end return 0`;

/** Held while one job sends a chat's messages; short-lived and renewed in the background. */
export interface ChatLease {
  readonly chatId: number;
  /** Aborts when a renewal found the lease gone (expired, maybe taken by another job). */
  readonly lost: AbortSignal;
  /** Stops the renewals and frees the chat. */
  release(): Promise<void>;
}

export interface ChatLockOptions {
  redis: Redis;
  /** QUEUE_PREFIX: locks live beside the queues and go with them. */
  prefix: string;
  /**
   * Expiry that frees the chat if the holder dies: a few seconds, so a crashed notifier blocks a
   * chat for no longer. Renewed every third of it while the holder lives.
   */
  ttlMs: number;
}

/**
 * One sender per chat at a time, across every notifier replica: `SET NX PX` with a random token,
 * renewed by a timer while held and released by compare-and-set scripts. The holder sends the
 * chat's messages in id order, which is what keeps them in order; a `sending` row it finds was
 * left by a holder that died.
 */
export class ChatLocks {
  constructor(private readonly options: ChatLockOptions) {}

  /** `abandon` (the job's signal) stops the renewals: a job handed back must not hold the chat. */
  async acquire(chatId: number, abandon?: AbortSignal): Promise<ChatLease | null> {
    const { redis, ttlMs } = this.options;
    const key = `${this.options.prefix}:notifier:chat-lock:${chatId}`;
    const token = randomUUID();
    const taken = await redis.set(key, token, "PX", ttlMs, "NX");
    if (taken !== "OK") return null;
    const lost = new AbortController();
    const renew = async () => {
      try {
        const extended = (await redis.eval(EXTEND_SCRIPT, 1, key, token, String(ttlMs))) === 1;
        if (!extended) stop(new Error(`lost the send lease of chat ${chatId}`));
      } catch {
        // Redis unreachable: the next tick tries again; the lease may expire meanwhile.
      }
    };
    const timer = setInterval(() => void renew(), Math.max(50, Math.floor(ttlMs / 3)));
    const onAbandon = () => clearInterval(timer);
    abandon?.addEventListener("abort", onAbandon, { once: true });
    function stop(reason: Error): void {
      clearInterval(timer);
      abandon?.removeEventListener("abort", onAbandon);
      lost.abort(reason);
    }
    return {
      chatId,
      lost: lost.signal,
      release: async () => {
        clearInterval(timer);
        abandon?.removeEventListener("abort", onAbandon);
        await redis.eval(RELEASE_SCRIPT, 1, key, token);
      },
    };
  }
}
