import type { OpencodeServerHandle } from "./opencode-server-handle.ts";

/** How long locating an unknown session across the pool may take. */
const LOCATE_TIMEOUT_MS = 2_000;
/** Sessions remembered for affinity (oldest forgotten first). */
const MAX_REMEMBERED = 20_000;

/**
 * Places runs on servers: a session always returns to the server that holds it (remembered, or
 * named by the caller from its trace, or found by asking each server); a new session goes to the
 * server that has loaded its directory while that one has a free slot, else to the least-loaded
 * server (running + queued runs), ties rotating.
 */
export class ServerPool {
  private readonly affinity = new Map<string, OpencodeServerHandle>();
  private rotation = 0;

  constructor(readonly servers: readonly OpencodeServerHandle[]) {
    if (servers.length === 0) throw new Error("an opencode client needs at least one server URL");
  }

  byUrl(url: string | undefined): OpencodeServerHandle | undefined {
    if (!url) return undefined;
    const clean = url.replace(/\/+$/, "");
    return this.servers.find((s) => s.url === clean);
  }

  remember(sessionId: string, server: OpencodeServerHandle): void {
    this.affinity.delete(sessionId);
    this.affinity.set(sessionId, server);
    if (this.affinity.size > MAX_REMEMBERED) this.affinity.delete(this.affinity.keys().next().value as string);
  }

  /** `preferred` while it has a free slot (it has loaded the run's directory), else the least-loaded server. */
  place(preferred?: string): OpencodeServerHandle {
    const server = this.byUrl(preferred);
    if (server && server.gate.load < server.gate.limit) return server;
    return this.leastLoaded();
  }

  leastLoaded(): OpencodeServerHandle {
    const n = this.servers.length;
    const start = this.rotation++ % n;
    let best = this.servers[start] as OpencodeServerHandle;
    for (let k = 1; k < n; k++) {
      const s = this.servers[(start + k) % n] as OpencodeServerHandle;
      if (s.gate.load < best.gate.load) best = s;
    }
    return best;
  }

  /** The server of an existing session; undefined when no server knows it. */
  async locate(sessionId: string, serverUrl?: string, signal?: AbortSignal): Promise<OpencodeServerHandle | undefined> {
    const named = this.byUrl(serverUrl);
    if (named) return named;
    const known = this.affinity.get(sessionId);
    if (known) return known;
    if (this.servers.length === 1) return this.servers[0];
    const cap = AbortSignal.timeout(LOCATE_TIMEOUT_MS);
    const bounded = signal ? AbortSignal.any([signal, cap]) : cap;
    const found = await Promise.all(
      this.servers.map(async (s) => {
        try {
          await s.api.session(sessionId, bounded);
          return s;
        } catch {
          return undefined; // 404 (not here) or unreachable: either way not usable for this session
        }
      }),
    );
    const hit = found.find((s) => s !== undefined);
    if (hit) this.remember(sessionId, hit);
    return hit;
  }
}
