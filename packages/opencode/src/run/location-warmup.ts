import type { OpencodeApi } from "../api/opencode-api.ts";
import { abortable } from "./active-poller.ts";

type KnownModel = { id: string; providerID: string };

/**
 * opencode boots a location lazily; until its model catalogue is loaded (a few hundred ms on a
 * fresh directory) a prompt there fails silently with "Model unavailable". So before the first
 * prompt in a directory we wait until the server lists models for it. Cached per directory, and
 * concurrent first runs share one wait: each `/api/model` call costs the server ~200 ms of CPU on
 * its single thread, so 50 parallel calls stalled every request for ~10 s.
 */
export class LocationWarmup {
  private readonly ready_ = new Map<string, KnownModel[]>();
  private readonly pending = new Map<string, Promise<KnownModel[]>>();

  constructor(
    private readonly api: OpencodeApi,
    private readonly maxWaitMs = 10_000,
  ) {}

  /** The models the server lists for `directory` (empty if it never listed any within the wait). */
  async ready(directory: string, signal?: AbortSignal, deadline = Infinity): Promise<KnownModel[]> {
    const cached = this.ready_.get(directory);
    if (cached) return cached;
    let shared = this.pending.get(directory);
    if (!shared) {
      // Not tied to one caller's signal: an aborted run must not fail the others sharing the wait.
      shared = this.poll(directory, Math.min(Date.now() + this.maxWaitMs, deadline)).finally(() => this.pending.delete(directory));
      this.pending.set(directory, shared);
      // Callers may all have gone (aborted) when it fails: the failure is theirs to see, never unhandled.
      shared.catch(() => undefined);
    }
    return signal ? abortable(shared, signal) : shared;
  }

  private async poll(directory: string, until: number): Promise<KnownModel[]> {
    let delay = 50;
    for (;;) {
      const models = await this.api.models(directory);
      if (models.length > 0) {
        this.ready_.set(directory, models);
        return models;
      }
      if (Date.now() + delay > until) return [];
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 400);
    }
  }
}
