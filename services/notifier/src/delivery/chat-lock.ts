import { randomUUID } from "node:crypto";
import type { Redis } from "@ratatoskr/runtime";
import { luaScript } from "./lua-script.ts";
import { HOLD_CHAT_FN, TAKE_SLOT_FN, type PacerScriptArgs } from "./send-pacer.ts";

/**
 * Takes the lease (SET NX PX with our token) and, in the same round trip, the chat's send slot
 * if it is free: {0} when another holder has the chat, else {1, take_slot's answer}.
 * KEYS: lease, global log, chat pace. ARGV: token, ttl, limit, window, interval, member.
 */
const ACQUIRE = luaScript(`${TAKE_SLOT_FN}
if not redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then return {0} end
return {1, take_slot(KEYS[2], KEYS[3], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])}`);

/**
 * Records the last send's hold on the chat (ARGV[2] ms, 0 for none) and deletes the lease only
 * while it still holds our token, in one round trip. KEYS: lease, chat pace.
 */
const RELEASE = luaScript(`${HOLD_CHAT_FN}
if tonumber(ARGV[2]) > 0 then hold_chat(KEYS[2], tonumber(ARGV[2])) end
if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`);
const EXTEND = luaScript(
  `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end return 0`,
);
const HOLD = luaScript(`${HOLD_CHAT_FN}
return hold_chat(KEYS[1], tonumber(ARGV[1]))`);

/** Held while one job sends a chat's messages; short-lived and renewed in the background. */
export interface ChatLease {
  readonly chatId: number;
  /** Aborts when a renewal found the lease gone (expired, maybe taken by another job). */
  readonly lost: AbortSignal;
  /** True once: the chat's send slot was free and taken with the lease. */
  takePrefetchedSlot(): boolean;
  /**
   * A message just went out as `parts` Telegram messages: the chat is held a chat interval per
   * part from now. Recorded with the next slot's wait or the release, not in a round trip of its own.
   */
  noteSent(parts: number): void;
  /** Records a noted send's hold now (before the next slot is taken). */
  flushSent(): Promise<void>;
  /** Stops the renewals, records a noted send's hold and frees the chat. */
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
  /** The pacer's keys: the lease takes the first slot and records the last hold with its own calls. */
  pacer: PacerScriptArgs;
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
    const { redis, ttlMs, pacer } = this.options;
    const key = `${this.options.prefix}:notifier:chat-lock:${chatId}`;
    const paceKey = pacer.chatKey(chatId);
    const token = randomUUID();
    const answer = (await ACQUIRE(
      redis,
      [key, pacer.globalKey, paceKey],
      [token, String(ttlMs), ...pacer.slotArgs, randomUUID()],
    )) as number[];
    if (answer[0] !== 1) return null;
    let prefetched = answer[1] === 0;
    let owedParts = 0;
    const lost = new AbortController();
    const renew = async () => {
      try {
        const extended = (await EXTEND(redis, [key], [token, String(ttlMs)])) === 1;
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
    const owedHoldMs = () => {
      const ms = owedParts > 0 ? pacer.holdMs(owedParts) : 0;
      owedParts = 0;
      return ms;
    };
    return {
      chatId,
      lost: lost.signal,
      takePrefetchedSlot: () => {
        const had = prefetched;
        prefetched = false;
        return had;
      },
      noteSent: (parts) => {
        owedParts += parts;
      },
      flushSent: async () => {
        const ms = owedHoldMs();
        if (ms > 0) await HOLD(redis, [paceKey], [String(ms)]);
      },
      release: async () => {
        clearInterval(timer);
        abandon?.removeEventListener("abort", onAbandon);
        await RELEASE(redis, [key, paceKey], [token, String(owedHoldMs())]);
      },
    };
  }
}
