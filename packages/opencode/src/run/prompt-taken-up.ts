import type { OpencodeApi } from "../api/opencode-api.ts";

/** Pages read per look: a resumed session's long history is read across several looks. */
const MAX_PAGES = 5;

/**
 * Whether opencode took one admitted prompt up, read from the session's durable history — the
 * same "prompted" signal the event stream carries, for a run whose stream is not live. Remembers
 * how far it read, so each look reads only what is new.
 */
export class PromptTakenUp {
  private after: number | undefined;
  private seen = false;

  constructor(
    private readonly api: OpencodeApi,
    private readonly sessionId: string,
    private readonly messageId: string,
  ) {}

  async check(signal: AbortSignal | undefined): Promise<boolean> {
    for (let page = 0; !this.seen && page < MAX_PAGES; page++) {
      const { data, hasMore } = await this.api.history(this.sessionId, this.after, signal);
      for (const event of data) {
        if (event.durable) this.after = event.durable.seq;
        if (event.type === "session.next.prompted" && event.data?.messageID === this.messageId) this.seen = true;
      }
      if (!hasMore || data.length === 0) break;
    }
    return this.seen;
  }
}
