import { createOutageLog, type Logger } from "@ratatoskr/runtime";
import { abortableSleep } from "./abortable-sleep.ts";

/** getUpdates as the poller needs it; telegraf's client provides it (see telegram-bot-api.ts). */
export interface UpdateSource {
  getUpdates(
    params: { offset: number; timeoutSec: number; limit?: number },
    signal: AbortSignal,
  ): Promise<Array<{ update_id: number }>>;
}

export interface TelegramPollerOptions {
  source: UpdateSource;
  /** Handles one batch; resolves when every update of it is handled (never rejects). */
  onBatch(updates: ReadonlyArray<{ update_id: number }>): Promise<void>;
  logger: Logger;
  /** Long-poll hold in seconds (Telegram allows up to 50). */
  timeoutSec?: number;
  /** First pause after a failed getUpdates; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * Longest wait for the confirming getUpdates on stop: when Telegram cannot be reached then,
   * stopping must still end within the shutdown's deadline (the batch is only delivered again).
   */
  confirmTimeoutMs?: number;
}

/**
 * Long polling with its own loop rather than telegraf's `launch()`: a batch is fully handled
 * before its offset is confirmed (so a crash re-delivers it rather than losing it), `stop()`
 * waits for the batch in hand and confirms it (so a restart does not replay it), and a 409
 * (another poller) or an outage is retried with backoff instead of ending polling for good. An
 * outage of Telegram or of the store is logged when it starts, at intervals while it lasts and
 * when it ends, not at every failed poll.
 */
export class TelegramPoller {
  private readonly controller = new AbortController();
  private loop: Promise<void> | undefined;
  private offset = 0;

  constructor(private readonly opts: TelegramPollerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { source, logger, timeoutSec = 50, retryDelayMs = 1_000, maxRetryDelayMs = 30_000 } = this.opts;
    const signal = this.controller.signal;
    const fetching = createOutageLog({ logger, what: "telegram getUpdates" });
    const storing = createOutageLog({ logger, what: "telegram update store" });
    let delayMs = retryDelayMs;
    while (!signal.aborted) {
      let outage = fetching;
      try {
        const updates = await source.getUpdates({ offset: this.offset, timeoutSec }, signal);
        fetching.recovered();
        const last = updates.at(-1);
        if (last) {
          outage = storing;
          await this.opts.onBatch(updates);
          storing.recovered();
          this.offset = last.update_id + 1;
        }
        delayMs = retryDelayMs;
      } catch (err) {
        if (signal.aborted) break;
        outage.failed(err);
        await abortableSleep(delayMs, signal);
        delayMs = Math.min(delayMs * 2, maxRetryDelayMs);
      }
    }
    await this.confirmOffset();
  }

  /** Tells Telegram the last handled batch is done, so the next poller starts after it. */
  private async confirmOffset(): Promise<void> {
    if (this.offset === 0) return;
    try {
      await this.opts.source.getUpdates(
        { offset: this.offset, timeoutSec: 0, limit: 1 },
        AbortSignal.timeout(this.opts.confirmTimeoutMs ?? 5_000),
      );
    } catch (err) {
      this.opts.logger.warn(
        { err },
        "could not confirm the last telegram updates; they may be delivered again",
      );
    }
  }
}
