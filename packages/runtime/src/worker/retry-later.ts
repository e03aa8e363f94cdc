/**
 * "Not now, try again in `delayMs`": Telegram's 429 `retry_after`, or a resource another worker
 * holds (a chat's send lock). runWorker moves the job to `delayed` for that long without counting
 * an attempt, so waiting never uses up the retries meant for real failures.
 */
export class RetryLaterError extends Error {
  override readonly name = "RetryLaterError";
  readonly delayMs: number;

  constructor(delayMs: number, reason: string) {
    super(`retry in ${Math.round(delayMs)} ms: ${reason}`);
    this.delayMs = Math.max(0, Math.ceil(delayMs));
  }
}
