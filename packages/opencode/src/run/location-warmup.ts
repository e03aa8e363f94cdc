import type { OpencodeApi } from "../api/opencode-api.ts";
import { abortable } from "./active-poller.ts";

/**
 * opencode boots a location lazily; until it has loaded the configured providers (a few hundred
 * ms on an idle machine, 10-20 s on a loaded one) a prompt there fails silently with "Model
 * unavailable". So before the first prompt in a directory we wait until the server knows the
 * run's provider there, asked of `/api/provider/{id}` (a small answer). The model list only tells
 * a location still booting (no models) from one that booted without that provider; it is
 * expensive while booting (models.dev's whole catalogue, ~8,000 models, 4.5 MB).
 *
 * A slow boot is waited for — each request may take as long as the wait allows, never failing on
 * the client's usual request timeout — because proceeding early only buys a silent session and a
 * retried job. Cached per directory and provider; concurrent first runs share one wait.
 */
/** How long a booted location may lack the run's provider before it counts as missing (ms). */
const MISSING_PROVIDER_MS = 3_000;

const keyOf = (directory: string, providerId: string | undefined) => `${providerId ?? ""}\u0000${directory}`;

export class LocationWarmup {
  private readonly ready_ = new Set<string>();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly api: OpencodeApi,
    private readonly maxWaitMs = 60_000,
  ) {}

  /**
   * Resolves when the location is ready for `providerId` (any model when undefined), or when the
   * wait ran out / the location booted without that provider (the prompt's silence then says so).
   * Rejects when the server cannot be asked at all, or with the signal's reason.
   */
  async ready(directory: string, providerId: string | undefined, signal?: AbortSignal, deadline = Infinity): Promise<void> {
    const key = keyOf(directory, providerId);
    if (this.ready_.has(key)) return;
    let shared = this.pending.get(key);
    if (!shared) {
      // Not tied to one caller's signal: an aborted run must not fail the others sharing the wait.
      shared = this.poll(directory, providerId, Math.min(Date.now() + this.maxWaitMs, deadline))
        .then((ready) => {
          if (ready) this.ready_.add(key);
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, shared);
      // Callers may all have gone (aborted) when it fails: the failure is theirs to see, never unhandled.
      shared.catch(() => undefined);
    }
    return signal ? abortable(shared, signal) : shared;
  }

  /**
   * Forgets that a location was ready: a session there went silent, so the server may have lost
   * it (restarted) and the next run must wait for it again.
   */
  forget(directory: string, providerId: string | undefined): void {
    this.ready_.delete(keyOf(directory, providerId));
  }

  /** True once ready; false when the wait ran out or the location has no such provider. */
  private async poll(directory: string, providerId: string | undefined, until: number): Promise<boolean> {
    let delay = 50;
    /** When the location was first seen booted (models listed) without the provider. */
    let bootedAt: number | undefined;
    for (;;) {
      const timeoutMs = Math.max(1_000, until - Date.now());
      if (providerId) {
        if (await this.api.hasProvider(directory, providerId, undefined, timeoutMs)) return true;
        // Unknown provider: a location still booting lists no models (a cheap answer). A booted one
        // may load its configured providers a moment after the catalogue; one that still lacks it
        // MISSING_PROVIDER_MS later has no such provider (the prompt's silence then says so).
        if (bootedAt === undefined && (await this.api.models(directory, undefined, timeoutMs)).length > 0) bootedAt = Date.now();
        if (bootedAt !== undefined && Date.now() - bootedAt >= MISSING_PROVIDER_MS) return false;
      } else if ((await this.api.models(directory, undefined, timeoutMs)).length > 0) return true;
      if (Date.now() + delay > until) return false;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 400);
    }
  }
}
