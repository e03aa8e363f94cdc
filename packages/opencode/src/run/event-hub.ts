import type { OpencodeHttp } from "../http/opencode-http.ts";
import { parseSessionEvent } from "./event-kinds.ts";

/** Per-session view of the hub. Times are epoch ms of receipt, 0 = never. */
export interface SessionEvents {
  /** Latest event of any kind for the session (real progress: resets the idle timeout). */
  readonly lastEventAt: number;
  /** Latest event saying opencode took a prompt up (the turn began). */
  readonly lastStartAt: number;
  /** Latest event saying the turn probably ended. */
  readonly lastEndAt: number;
  /** Latest permission request or question event. */
  readonly lastAskAt: number;
  /** Latest wake-up (start, end, ask, or the stream connecting/dropping): a poll must observe state after it. */
  readonly wakeAt: number;
  /** True while the server's event stream is connected. */
  readonly live: boolean;
  /** When the current connection delivered its first bytes (0 while not live): events before it were not seen. */
  readonly liveSince: number;
  /** Resolves after `ms`, or earlier on a wake-up of this session or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<void>;
  close(): void;
}

interface Subscriber {
  lastEventAt: number;
  lastStartAt: number;
  lastEndAt: number;
  lastAskAt: number;
  wakeAt: number;
  wake: (() => void) | undefined;
}

/**
 * One `GET /api/event` stream per client, shared by every run, used to wake watchers when a turn
 * ends or asks for permission, and as the progress signal for idle timeouts. Polling stays the
 * source of truth: if the stream drops or never connects, runs fall back to faster polling.
 * Open while anyone subscribes or holds it.
 */
export class EventHub {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private holders = 0;
  private closed = false;
  private readonly liveWaiters = new Set<() => void>();
  private abort: AbortController | undefined;
  private buffer = "";
  live = false;
  liveSince = 0;

  constructor(
    private readonly http: OpencodeHttp,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps the stream open (e.g. for a whole run, so it is live before the first prompt); returns the release. */
  hold(): () => void {
    this.holders++;
    this.ensureConnected();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders--;
      this.disconnectIfUnused();
    };
  }

  /** Resolves once the stream is live, or after `ms` while it connects; at once if no connection is under way. */
  async whenLive(ms: number): Promise<void> {
    if (this.live || !this.abort) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.liveWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.liveWaiters.add(done);
    });
  }

  subscribe(sessionId: string): SessionEvents {
    const sub: Subscriber = { lastEventAt: 0, lastStartAt: 0, lastEndAt: 0, lastAskAt: 0, wakeAt: 0, wake: undefined };
    const set = this.subscribers.get(sessionId) ?? new Set<Subscriber>();
    set.add(sub);
    this.subscribers.set(sessionId, set);
    this.ensureConnected();
    const live = () => this.live;
    const liveSince = () => this.liveSince;
    return {
      get lastEventAt() {
        return sub.lastEventAt;
      },
      get lastStartAt() {
        return sub.lastStartAt;
      },
      get lastEndAt() {
        return sub.lastEndAt;
      },
      get lastAskAt() {
        return sub.lastAskAt;
      },
      get wakeAt() {
        return sub.wakeAt;
      },
      get live() {
        return live();
      },
      get liveSince() {
        return liveSince();
      },
      wait: (ms, signal) =>
        new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            sub.wake = undefined;
            signal?.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          sub.wake = done;
          signal?.addEventListener("abort", done, { once: true });
        }),
      close: () => {
        set.delete(sub);
        if (set.size === 0 && this.subscribers.get(sessionId) === set) this.subscribers.delete(sessionId);
        this.disconnectIfUnused();
      },
    };
  }

  /** Drops the stream for good (client close): nothing reconnects afterwards. */
  close(): void {
    this.closed = true;
    this.abort?.abort();
    this.abort = undefined;
    this.live = false;
    this.liveSince = 0;
  }

  private ensureConnected(): void {
    if (this.closed) return;
    if (!this.abort) this.connect();
  }

  private connect(): void {
    const abort = new AbortController();
    this.abort = abort;
    this.buffer = "";
    void this.http
      .stream("/api/event", abort.signal, (text) => {
        if (this.abort !== abort) return; // a stale connection's last bytes
        if (!this.live) {
          this.live = true;
          this.liveSince = this.now();
          this.wakeAll(); // events before this instant were missed: everyone re-checks once
        }
        this.consume(text);
      })
      .catch(() => undefined)
      .finally(() => {
        if (this.abort !== abort) return; // disconnected on purpose, or already replaced
        this.live = false;
        this.liveSince = 0;
        this.wakeAll(); // watchers switch to fallback polling now
        // Reconnect after a pause while someone still listens.
        this.abort = undefined;
        setTimeout(() => {
          if (!this.abort && this.inUse()) this.ensureConnected();
        }, 1_000).unref();
      });
  }

  private inUse(): boolean {
    return this.holders > 0 || this.subscribers.size > 0;
  }

  private disconnectIfUnused(): void {
    if (this.inUse()) return;
    this.abort?.abort();
    this.abort = undefined;
    this.live = false;
    this.liveSince = 0;
  }

  private wakeAll(): void {
    for (const done of [...this.liveWaiters]) done();
    const at = this.now();
    for (const subs of this.subscribers.values()) {
      for (const sub of subs) {
        sub.wakeAt = at;
        sub.wake?.();
      }
    }
  }

  private consume(text: string): void {
    this.buffer += text;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data:")) continue;
      const event = parseSessionEvent(line.slice(5));
      const subs = event ? this.subscribers.get(event.sessionId) : undefined;
      if (!event || !subs) continue;
      const at = this.now();
      for (const sub of subs) {
        sub.lastEventAt = at;
        if (event.kind === "progress") continue;
        if (event.kind === "end") sub.lastEndAt = at;
        else if (event.kind === "start") sub.lastStartAt = at;
        else sub.lastAskAt = at;
        sub.wakeAt = at;
        sub.wake?.();
      }
    }
  }
}
