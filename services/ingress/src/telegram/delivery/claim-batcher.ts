import type { ClaimedUpdate, TelegramUpdateRepository } from "@ratatoskr/db";

export type ClaimStore = Pick<TelegramUpdateRepository, "finishAndClaimChats">;

interface Waiting {
  finished: number | null;
  chatId: number;
  resolve(update: ClaimedUpdate | null): void;
  reject(err: unknown): void;
}

/**
 * Group commit for the inbox's per-chat claims: while one statement is on its way, the chats
 * that finish an update or want their next one meanwhile wait and go together in the next
 * statement (see `finishAndClaimChats`). Many chats worked off side by side then cost a handful
 * of statements, not two per update, and leave Postgres and the event loop to intake.
 * Each caller learns its chat's claimed update (or null); an outage rejects the whole batch.
 */
export class ClaimBatcher {
  private waiting: Waiting[] = [];
  private busy = false;

  constructor(
    private readonly store: ClaimStore,
    private readonly leaseMs: number,
    private readonly maxBatch = 200,
  ) {}

  /** The chat's oldest pending update, claimed; null when there is none or it is held. */
  claim(chatId: number): Promise<ClaimedUpdate | null> {
    return this.enqueue(null, chatId);
  }

  /** Marks `updateId` done and claims the chat's next update, as `claim`. */
  finishAndClaim(updateId: number, chatId: number): Promise<ClaimedUpdate | null> {
    return this.enqueue(updateId, chatId);
  }

  private enqueue(finished: number | null, chatId: number): Promise<ClaimedUpdate | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ finished, chatId, resolve, reject });
      if (this.busy) return;
      // On the next turn: every chat asking in this one (a batch of stored updates kicks many at
      // once) goes in the same statement, and I/O waiting meanwhile (intake) is served first.
      this.busy = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      try {
        const finished = batch.flatMap((w) => (w.finished === null ? [] : [w.finished]));
        const chats = [...new Set(batch.map((w) => w.chatId))];
        const claimed = new Map<number, ClaimedUpdate>();
        for (const update of await this.store.finishAndClaimChats(finished, chats, this.leaseMs))
          if (update.chatId !== null) claimed.set(update.chatId, update);
        for (const w of batch) {
          // One holder per update: were a chat asked for twice, only its first asker gets it.
          w.resolve(claimed.get(w.chatId) ?? null);
          claimed.delete(w.chatId);
        }
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.busy = false;
  }
}
