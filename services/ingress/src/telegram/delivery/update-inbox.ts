import type { ClaimedUpdate, InboxKey, TelegramUpdateRepository } from "@ratatoskr/db";
import { createOutageLog, type Logger, type OutageLog } from "@ratatoskr/runtime";
import { ClaimBatcher } from "./claim-batcher.ts";
import { HandlingSlots } from "./handling-slots.ts";
import { isPoison, PoisonUpdateError } from "./update-failure.ts";

export type UpdateStore = Pick<
  TelegramUpdateRepository,
  "claimNext" | "finishAndClaimChats" | "extendLease" | "markDone" | "markPoison" | "postpone" | "ready"
>;

export interface UpdateInboxOptions {
  store: UpdateStore;
  /** Handles one stored update; throws PoisonUpdateError for one that can never be handled. */
  handle(update: unknown): Promise<void>;
  logger: Logger;
  /**
   * How long a claimed update is held; renewed every third of it while it is handled, so a
   * replica that died holding it frees it after this (default 10 s), however long handling takes.
   */
  leaseMs?: number;
  /** How often stored updates nobody is working on are looked for (other replicas', a crash's). */
  sweepIntervalMs?: number;
  /** First retry delay after an outage; doubles per attempt up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * Chats worked off side by side (default 64): their claims and done marks go to Postgres
   * together, a few statements for all of them.
   */
  maxConcurrentChats?: number;
  /**
   * Updates handled at the same time (default 4). Handling waits its turn rather than taking
   * every database connection from intake: under a burst updates are still taken at once and
   * handled as fast as this allows.
   */
  maxConcurrentHandling?: number;
}

const keyOf = (key: InboxKey): string => ("chatId" in key ? `chat:${key.chatId}` : `update:${key.updateId}`);

/**
 * Works off the stored Telegram updates (X6, T5): per chat one at a time in update order, chats
 * side by side. An update is done only once handled; an outage leaves it pending and retries it
 * later (the chat's later updates wait behind it); a poison update is recorded and passed.
 */
export class UpdateInbox {
  private readonly stopping = new AbortController();
  private readonly drains = new Map<string, { again: boolean; done: Promise<void> }>();
  /** Keys kicked while `maxConcurrentChats` were busy, in kick order. */
  private readonly queued = new Map<string, InboxKey>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Postgres away: one line when the sweep starts failing, reminders while it lasts, one when it is back. */
  private readonly outage: OutageLog;
  private readonly leaseMs: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly claims: ClaimBatcher;
  private readonly slots: HandlingSlots;

  constructor(private readonly opts: UpdateInboxOptions) {
    this.leaseMs = opts.leaseMs ?? 10_000;
    this.retryDelayMs = opts.retryDelayMs ?? 500;
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? 30_000;
    this.claims = new ClaimBatcher(opts.store, this.leaseMs);
    this.slots = new HandlingSlots(opts.maxConcurrentHandling ?? 4);
    this.outage = createOutageLog({ logger: opts.logger, what: "telegram inbox (postgres)" });
  }

  /** Starts the sweep (at once: updates stored before a restart are picked up first). */
  start(): void {
    if (this.sweepTimer) return;
    const every = this.opts.sweepIntervalMs ?? 2_000;
    const tick = () => {
      void this.sweep().finally(() => {
        if (!this.stopping.signal.aborted) this.sweepTimer = setTimeout(tick, every);
      });
    };
    this.sweepTimer = setTimeout(tick, 0);
  }

  /** Handles the key's pending updates now (or right after the drain in progress). */
  kick(key: InboxKey): void {
    if (this.stopping.signal.aborted) return;
    const id = keyOf(key);
    const running = this.drains.get(id);
    if (running) {
      running.again = true;
      return;
    }
    if (this.drains.size >= (this.opts.maxConcurrentChats ?? 64)) {
      this.queued.set(id, key);
      return;
    }
    const state = { again: false, done: Promise.resolve() };
    this.drains.set(id, state);
    state.done = (async () => {
      do {
        state.again = false;
        await this.drain(key);
      } while (state.again && !this.stopping.signal.aborted);
    })()
      .catch((err: unknown) => this.opts.logger.error({ err, key: id }, "telegram inbox drain failed"))
      .finally(() => {
        this.drains.delete(id);
        const [next] = this.queued;
        if (!next) return;
        this.queued.delete(next[0]);
        this.kick(next[1]);
      });
  }

  /** Stops taking updates and waits for the ones in hand; the rest stay stored for the next start. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.queued.clear();
    clearTimeout(this.sweepTimer);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    while (this.drains.size > 0) await Promise.all([...this.drains.values()].map((d) => d.done));
  }

  /** Chats with work in progress (tests, shutdown logs). */
  get busy(): number {
    return this.drains.size;
  }

  private async sweep(): Promise<void> {
    try {
      const keys = await this.opts.store.ready();
      this.outage.recovered();
      for (const key of keys) this.kick(key);
    } catch (err) {
      this.outage.failed(err);
    }
  }

  private async drain(key: InboxKey): Promise<void> {
    let update: ClaimedUpdate | null;
    try {
      update = await this.claim(key);
    } catch {
      // The sweep reports the outage and picks the chat up again once it is over.
      return;
    }
    while (update && !this.stopping.signal.aborted) {
      const held = update;
      // Held while handled and while its outcome is recorded: only a dead replica's lease runs out.
      const renewal = setInterval(() => {
        this.opts.store.extendLease(held.updateId, this.leaseMs).catch(() => undefined);
      }, this.leaseMs / 3);
      try {
        const outcome = await this.handleHeld(key, held, () => clearInterval(renewal));
        if (outcome === "retry") return;
        update = await this.next(key, held, outcome);
      } finally {
        clearInterval(renewal);
      }
    }
  }

  /** The key's oldest pending update, claimed; a chat's claim goes with other chats' (ClaimBatcher). */
  private claim(key: InboxKey): Promise<ClaimedUpdate | null> {
    return "chatId" in key ? this.claims.claim(key.chatId) : this.opts.store.claimNext(key, this.leaseMs);
  }

  /**
   * Records a handled update and takes the chat's next one: a done update and the next claim are
   * one statement, shared with the other chats'. Null when the chat has nothing more (or is held elsewhere) or when stopping,
   * when nothing new is claimed.
   */
  private async next(
    key: InboxKey,
    update: ClaimedUpdate,
    outcome: "done" | "poison",
  ): Promise<ClaimedUpdate | null> {
    const { store } = this.opts;
    const stopping = () => this.stopping.signal.aborted;
    if (outcome === "done" && update.chatId !== null && "chatId" in key) {
      const chatId = update.chatId;
      return this.settle(() =>
        stopping()
          ? store.markDone(update.updateId).then(() => null)
          : this.claims.finishAndClaim(update.updateId, chatId),
      );
    }
    if (outcome === "done") await this.settle(() => store.markDone(update.updateId));
    if (stopping()) return null;
    try {
      return await this.claim(key);
    } catch {
      return null;
    }
  }

  /** "done" once handled, "poison" when it never can be (recorded), "retry" when it waits for a retry. */
  private async handleHeld(
    key: InboxKey,
    update: ClaimedUpdate,
    release: () => void,
  ): Promise<"done" | "poison" | "retry"> {
    const { logger } = this.opts;
    const ids = { updateId: update.updateId, chatId: update.chatId };
    try {
      let body: unknown;
      try {
        body = JSON.parse(update.payload);
      } catch {
        throw new PoisonUpdateError("stored update is not JSON");
      }
      await this.slots.run(() => this.opts.handle(body));
    } catch (err) {
      if (isPoison(err)) {
        logger.error({ err, ...ids }, "telegram update can never be handled; acknowledged and skipped");
        await this.settle(() => this.opts.store.markPoison(update.updateId, String(err)));
        return "poison";
      }
      const retryInMs = Math.min(this.retryDelayMs * 2 ** update.attempts, this.maxRetryDelayMs);
      logger.warn(
        { err, ...ids, attempt: update.attempts + 1, retryInMs },
        "telegram update failed; will retry",
      );
      release();
      await this.opts.store.postpone(update.updateId, retryInMs, String(err)).catch(() => undefined);
      this.later(key, retryInMs + 50);
      return "retry";
    }
    return "done";
  }

  /**
   * Records the outcome, retrying while the database is away: an update handled but not marked
   * would be handled a second time once its lease ran out.
   */
  private async settle<T>(write: () => Promise<T>): Promise<T> {
    for (let delay = this.retryDelayMs; ; delay = Math.min(delay * 2, this.maxRetryDelayMs)) {
      try {
        return await write();
      } catch (err) {
        if (this.stopping.signal.aborted) throw err;
        this.opts.logger.warn({ err, retryInMs: delay }, "telegram update outcome not recorded; retrying");
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private later(key: InboxKey, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.kick(key);
    }, ms);
    this.timers.add(timer);
  }
}
