import { randomUUID } from "node:crypto";
import type { Redis } from "@ratatoskr/runtime";
import { EXTEND, HOLD, LEASES } from "./chat-lock.scripts.ts";
import type { PacerScriptArgs, TakenSlot } from "./send-pacer.ts";

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

  /** One chat's lease, or null when another holder has it (see `acquireMany`). */
  async acquire(chatId: number, abandon?: AbortSignal): Promise<ChatLease | null> {
    return (await this.acquireMany([chatId], abandon))[0] ?? null;
  }

  /**
   * The leases of several chats in one round trip (with every release waiting to go out), each
   * with its chat's first send slot when free; null for a chat another holder has. The leases
   * taken together are renewed together, one call per renewal. `abandon` (the job's signal)
   * stops the renewals: a job handed back must not hold its chats.
   */
  async acquireMany(chatIds: readonly number[], abandon?: AbortSignal): Promise<Array<ChatLease | null>> {
    if (chatIds.length === 0) return [];
    const { pacer } = this.options;
    const asked = chatIds.map((chatId) => ({
      chatId,
      key: `${this.options.prefix}:notifier:chat-lock:${chatId}`,
      paceKey: pacer.chatKey(chatId),
      token: randomUUID(),
      member: randomUUID(),
    }));
    const answer = await this.leases({
      keys: [pacer.globalKey, ...asked.flatMap((a) => [a.key, a.paceKey])],
      args: [String(this.options.ttlMs), ...pacer.slotArgs, ...asked.flatMap((a) => [a.token, a.member])],
    });
    const renewals = new Renewals(this.options, abandon);
    return asked.map((a, i) => {
      if (answer[2 * i] !== 1) return null;
      const slot = answer[2 * i + 1] === 0 ? { member: a.member, at: Date.now() } : undefined;
      return this.lease(a, slot, renewals);
    });
  }

  private lease(
    held: { chatId: number; key: string; paceKey: string; token: string },
    slot: TakenSlot | undefined,
    renewals: Renewals,
  ): ChatLease {
    const { redis, pacer } = this.options;
    const { chatId, key, paceKey, token } = held;
    let prefetched = slot;
    let owedParts = 0;
    const lost = new AbortController();
    renewals.add(key, token, () => lost.abort(new Error(`lost the send lease of chat ${chatId}`)));
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
        renewals.remove(key);
        await this.release({ key, paceKey, token, holdMs: owedHoldMs() });
      },
    };
  }
}

/**
 * The renewals of leases taken together: one timer and one call for all that are still held,
 * every third of the ttl. A lease the call finds gone (expired, maybe taken by another holder)
 * is told it is lost; the timer stops when the last lease is released or the job is abandoned.
 */
class Renewals {
  private readonly held = new Map<string, { token: string; onLost: () => void }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: Pick<ChatLockOptions, "redis" | "ttlMs">,
    private readonly abandon: AbortSignal | undefined,
  ) {
    abandon?.addEventListener("abort", this.stop, { once: true });
  }

  add(key: string, token: string, onLost: () => void): void {
    this.held.set(key, { token, onLost });
    if (this.timer || this.abandon?.aborted) return;
    const every = Math.max(50, Math.floor(this.options.ttlMs / 3));
    this.timer = setInterval(() => void this.renew(), every);
  }

  remove(key: string): void {
    this.held.delete(key);
    if (this.held.size === 0) this.stop();
  }

  private readonly stop = (): void => {
    clearInterval(this.timer);
    this.timer = undefined;
    this.abandon?.removeEventListener("abort", this.stop);
  };

  private async renew(): Promise<void> {
    const entries = [...this.held];
    if (entries.length === 0) return;
    try {
      const answer = (await EXTEND(
        this.options.redis,
        entries.map(([key]) => key),
        [String(this.options.ttlMs), ...entries.map(([, held]) => held.token)],
      )) as number[];
      entries.forEach(([key, held], i) => {
        if (answer[i] === 1) return;
        this.remove(key);
        held.onLost();
      });
    } catch {
      // Redis unreachable: the next tick tries again; the leases may expire meanwhile.
    }
  }
}
