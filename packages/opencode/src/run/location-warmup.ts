import type { OpencodeApi } from "../api/opencode-api.ts";

type KnownModel = { id: string; providerID: string };

/**
 * opencode boots a location lazily; until its model catalogue is loaded (a few hundred ms on a
 * fresh directory) a prompt there fails silently with "Model unavailable". So before the first
 * prompt in a directory we wait until the server lists models for it. Cached per directory.
 */
export class LocationWarmup {
  private readonly ready_ = new Map<string, KnownModel[]>();

  constructor(
    private readonly api: OpencodeApi,
    private readonly maxWaitMs = 10_000,
  ) {}

  /** The models the server lists for `directory` (empty if it never listed any within the wait). */
  async ready(directory: string, signal?: AbortSignal, deadline = Infinity): Promise<KnownModel[]> {
    const cached = this.ready_.get(directory);
    if (cached) return cached;
    const until = Math.min(Date.now() + this.maxWaitMs, deadline);
    let delay = 50;
    for (;;) {
      const models = await this.api.models(directory, signal);
      if (models.length > 0) {
        this.ready_.set(directory, models);
        return models;
      }
      if (Date.now() + delay > until || signal?.aborted) return [];
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 400);
    }
  }
}
