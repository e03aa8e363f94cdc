import { randomUUID } from "node:crypto";
import type { Redis } from "@ratatoskr/runtime";
import { luaScript } from "./lua-script.ts";
import { HOLD_CHAT_FN, TAKE_SLOT_FN, type PacerScriptArgs, type TakenSlot } from "./send-pacer.ts";

/**
 * Frees the leases given (each: the last send's hold on its chat recorded, the lease deleted only
 * while it still holds our token), then, if asked, takes a lease (SET NX PX with our token) and,
 * in the same round trip, the chat's send slot if it is free. Answers {0} when another holder has
 * the chat, {1, take_slot's answer} when taken, {2} when only freeing.
 * KEYS: n × (lease, chat pace), then lease, global log, chat pace.
 * ARGV: n, n × (token, hold ms), then token, ttl, limit, window, interval, member.
 */
const LEASES = luaScript(`${HOLD_CHAT_FN}${TAKE_SLOT_FN}
local n = tonumber(ARGV[1])
for i = 1, n do
  local hold = tonumber(ARGV[2 * i + 1])
  if hold > 0 then hold_chat(KEYS[2 * i], hold) end
  if redis.call("GET", KEYS[2 * i - 1]) == ARGV[2 * i] then redis.call("DEL", KEYS[2 * i - 1]) end
end
local k, a = 2 * n, 2 * n + 1
if #KEYS == k then return {2} end
if not redis.call("SET", KEYS[k + 1], ARGV[a + 1], "PX", ARGV[a + 2], "NX") then return {0} end
return {1, take_slot(KEYS[k + 2], KEYS[k + 3], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), ARGV[a + 6])}`);

/**
 * A freed lease waits this long for the next acquire to carry it (the worker's next job usually
 * comes within a round trip), else goes on its own with any others freed meanwhile. The chat
 * stays held that much longer; its pacing hold is recorded then, so it errs late, never early.
 */
const RELEASE_LINGER_MS = 10;

interface PendingRelease {
  key: string;
  paceKey: string;
  token: string;
  holdMs: number;
  done(err?: unknown): void;
}

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
  /** Once: the chat's send slot, when it was free and taken with the lease. */
  takePrefetchedSlot(): TakenSlot | undefined;
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
  private releases: PendingRelease[] = [];
  private releaseTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ChatLockOptions) {}

  /** Runs LEASES with every pending release first, then `take` if given; settles the releases. */
  private async leases(take?: { keys: string[]; args: string[] }): Promise<number[]> {
    const freeing = this.releases;
    this.releases = [];
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    const keys = [...freeing.flatMap((r) => [r.key, r.paceKey]), ...(take?.keys ?? [])];
    const args = [
      String(freeing.length),
      ...freeing.flatMap((r) => [r.token, String(r.holdMs)]),
      ...(take?.args ?? []),
    ];
    try {
      const answer = (await LEASES(this.options.redis, keys, args)) as number[];
      for (const r of freeing) r.done();
      return answer;
    } catch (err) {
      for (const r of freeing) r.done(err);
      throw err;
    }
  }

  private release(pending: Omit<PendingRelease, "done">): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.releases.push({ ...pending, done: (err) => (err === undefined ? resolve() : reject(err)) });
      this.releaseTimer ??= setTimeout(() => void this.leases().catch(() => undefined), RELEASE_LINGER_MS);
    });
  }

  /** `abandon` (the job's signal) stops the renewals: a job handed back must not hold the chat. */
  async acquire(chatId: number, abandon?: AbortSignal): Promise<ChatLease | null> {
    const { redis, ttlMs, pacer } = this.options;
    const key = `${this.options.prefix}:notifier:chat-lock:${chatId}`;
    const paceKey = pacer.chatKey(chatId);
    const token = randomUUID();
    const member = randomUUID();
    const answer = await this.leases({
      keys: [key, pacer.globalKey, paceKey],
      args: [token, String(ttlMs), ...pacer.slotArgs, member],
    });
    if (answer[0] !== 1) return null;
    let prefetched: TakenSlot | undefined = answer[1] === 0 ? { member, at: Date.now() } : undefined;
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
        prefetched = undefined;
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
        await this.release({ key, paceKey, token, holdMs: owedHoldMs() });
      },
    };
  }
}
