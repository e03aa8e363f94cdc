import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "@ratatoskr/runtime";
import { luaScript } from "./lua-script.ts";

/** The slot is further away than a job should sit waiting (a 429 hold): come back later. */
export class SlotDeferredError extends Error {
  override readonly name = "SlotDeferredError";
  constructor(readonly waitMs: number) {
    super(`next send slot in ${waitMs} ms`);
  }
}

/** A send slot in the bot's overall log: its member there and when (this process's clock) it was taken. */
export interface TakenSlot {
  member: string;
  at: number;
}

export interface SendPacer {
  /**
   * Resolves when one more message may go to `chatId`: within the bot's overall rate and at
   * least one chat interval after the chat's previous message. Waits in place for short gaps;
   * throws SlotDeferredError when the chat is held longer (after a 429).
   */
  takeSlot(chatId: number, signal: AbortSignal): Promise<TakenSlot>;
  /**
   * Called right before the send: a slot taken more than a few ms ago (the claim and rendering
   * took long, as on a loaded machine) is moved to now in the overall log, waiting if the rate is
   * used up, so the log's times are the real send times and late sends never bunch up.
   */
  confirmSlot(slot: TakenSlot, signal: AbortSignal): Promise<void>;
  /** Telegram said "retry after": no message to this chat for `waitMs`, on any replica. */
  holdChat(chatId: number, waitMs: number): Promise<void>;
  /**
   * A message just went out as `parts` Telegram messages. The chat's next slot opens a chat
   * interval per part from now: measured from the real send, not from when its slot was taken,
   * and as if each part of a long text had had a slot of its own.
   */
  sent(chatId: number, parts: number): Promise<void>;
  /** Keys and arguments of `take_slot` / `hold_chat` for scripts that combine them with a lease. */
  readonly scriptArgs: PacerScriptArgs;
}

export interface PacerScriptArgs {
  globalKey: string;
  chatKey(chatId: number): string;
  /** limit, window ms, chat interval ms: `take_slot`'s arguments after the keys (member last). */
  slotArgs: readonly [string, string, string];
  /** ms a send of `parts` messages holds its chat. */
  holdMs(parts: number): number;
  /** What takeSlot does with a wait the combined script returned: throws, sleeps or returns. */
  afterWait(waitMs: number, signal: AbortSignal): Promise<boolean>;
}

export interface SendPacerOptions {
  redis: Redis;
  prefix: string;
  globalPerSecond: number;
  chatIntervalMs: number;
}

/** Gaps up to one chat interval (plus timer slack) are waited out in place. */
const IN_PLACE_SLACK_MS = 250;

/**
 * The overall window is a little longer than a second: a slot is taken (or confirmed) a few ms
 * before its send goes out, and sends must still never put more than the rate into any sliding
 * second as Telegram sees them.
 */
const GLOBAL_WINDOW_MS = 1_050;

/** A slot older than this at send time is moved to now (well inside the window's 50 ms margin). */
const SLOT_FRESH_MS = 20;

/**
 * One round trip per slot: the chat's hold, then a sliding-window log of the bot's sends
 * (a sorted set of the last window's slots, scored by Redis' own clock so every replica agrees).
 * Returns 0 when the slot is taken, the chat's wait in ms when the chat is held, or minus the
 * overall wait (always short, at most a window) when the bot is at its rate.
 * Arguments: global log key, chat's next-allowed-time key, limit, window ms, chat interval ms, member.
 * A Lua function so the chat lease's script can take a slot in the same round trip.
 */
export const TAKE_SLOT_FN = `
local function take_slot(globalKey, chatKey, limit, window, interval, member)
  local t = redis.call("TIME")
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local chatNext = tonumber(redis.call("GET", chatKey) or "0")
  if chatNext > now then return chatNext - now end
  redis.call("ZREMRANGEBYSCORE", globalKey, "-inf", now - window)
  if redis.call("ZCARD", globalKey) >= limit then
    local oldest = redis.call("ZRANGE", globalKey, 0, 0, "WITHSCORES")
    return -math.max(1, tonumber(oldest[2]) + window - now + 1)
  end
  redis.call("ZADD", globalKey, now, member)
  redis.call("PEXPIRE", globalKey, window)
  redis.call("SET", chatKey, now + interval, "PX", interval)
  return 0
end`;

/**
 * Moves a taken slot (`member`) to now in the overall log, if the rate allows; otherwise keeps
 * it where it was and returns minus the wait. Arguments: global log key, limit, window ms, member.
 */
const MOVE_SLOT = luaScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key, limit, window, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local old = redis.call("ZSCORE", key, member)
redis.call("ZREM", key, member)
redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window)
if redis.call("ZCARD", key) >= limit then
  if old and tonumber(old) > now - window then redis.call("ZADD", key, old, member) end
  local oldest = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
  return -math.max(1, tonumber(oldest[2]) + window - now + 1)
end
redis.call("ZADD", key, now, member)
redis.call("PEXPIRE", key, window)
return 0`);

const TAKE_SLOT = luaScript(`${TAKE_SLOT_FN}
return take_slot(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])`);

/**
 * Holds a chat for `ms` from now, never shortening a longer hold. A Lua function so releasing
 * the chat lease can record the last send's hold in the same round trip.
 */
export const HOLD_CHAT_FN = `
local function hold_chat(chatKey, ms)
  local t = redis.call("TIME")
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local untilMs = now + ms
  local current = tonumber(redis.call("GET", chatKey) or "0")
  if current >= untilMs then return 0 end
  redis.call("SET", chatKey, untilMs, "PX", ms)
  return 1
end`;

/** The chat may not get anything for ARGV[1] ms from now (never shortens a longer hold). */
const HOLD_CHAT = luaScript(`${HOLD_CHAT_FN}
return hold_chat(KEYS[1], tonumber(ARGV[1]))`);

/**
 * Telegram's limits, about 30 messages a second overall and one a second per chat, kept in Redis
 * so every notifier replica shares them: a true sliding window overall (no fixed-window bursts
 * of twice the rate across a boundary) and a next-allowed time per chat.
 */
export function createSendPacer(options: SendPacerOptions): SendPacer {
  const { redis, prefix, chatIntervalMs, globalPerSecond } = options;
  const globalKey = `${prefix}:notifier:pace-global`;
  const chatKey = (chatId: number) => `${prefix}:notifier:pace-chat:${chatId}`;
  const maxInPlaceMs = chatIntervalMs + IN_PLACE_SLACK_MS;

  const slotArgs = [String(globalPerSecond), String(GLOBAL_WINDOW_MS), String(chatIntervalMs)] as const;

  async function holdChat(chatId: number, waitMs: number): Promise<void> {
    await HOLD_CHAT(redis, [chatKey(chatId)], [String(Math.max(1, Math.ceil(waitMs)))]);
  }

  /** True when the slot is taken; otherwise waits a short gap in place, or throws for a long hold. */
  async function afterWait(waitMs: number, signal: AbortSignal): Promise<boolean> {
    if (waitMs === 0) return true;
    if (waitMs > maxInPlaceMs) throw new SlotDeferredError(waitMs);
    await sleep(Math.abs(waitMs), undefined, { signal });
    return false;
  }

  return {
    async takeSlot(chatId, signal) {
      for (;;) {
        signal.throwIfAborted();
        const member = randomUUID();
        const waitMs = Number(
          await TAKE_SLOT(redis, [globalKey, chatKey(chatId)], [...slotArgs, member]),
        );
        if (await afterWait(waitMs, signal)) return { member, at: Date.now() };
      }
    },
    async confirmSlot(slot, signal) {
      if (Date.now() - slot.at <= SLOT_FRESH_MS) return;
      for (;;) {
        signal.throwIfAborted();
        const waitMs = Number(await MOVE_SLOT(redis, [globalKey], [slotArgs[0], slotArgs[1], slot.member]));
        if (waitMs === 0) return;
        await sleep(Math.abs(waitMs), undefined, { signal });
      }
    },
    holdChat,
    scriptArgs: {
      globalKey,
      chatKey,
      slotArgs,
      holdMs: (parts) => parts * chatIntervalMs,
      afterWait,
    },
    async sent(chatId, parts) {
      if (parts > 0) await holdChat(chatId, parts * chatIntervalMs);
    },
  };
}
