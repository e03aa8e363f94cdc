import type { IncomingUpdate } from "@ratatoskr/db";

/**
 * Group commit for the webhook: while one insert is on its way, the updates that arrive meanwhile
 * wait and go together in the next one. At low load every update is written at once, alone; at
 * high load one statement carries many, so intake keeps up with Telegram's bursts (issue 7 aim).
 * Each caller's promise settles with its own batch: resolved once its update is durable, rejected
 * when that insert failed (then nothing of the batch was taken and Telegram delivers it again).
 */
export class UpdateBatcher {
  private waiting: Array<{ update: IncomingUpdate; resolve: () => void; reject: (err: unknown) => void }> =
    [];
  private flushing = false;

  constructor(
    private readonly insert: (updates: readonly IncomingUpdate[]) => Promise<number>,
    private readonly maxBatch = 500,
  ) {}

  accept(update: IncomingUpdate): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ update, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      try {
        await this.insert(batch.map((w) => w.update));
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.flushing = false;
  }
}
