import type { OpencodeHttp } from "../http/opencode-http.ts";

/** Per-session view of the hub: when it last saw activity, and a wait that an event cuts short. */
export interface SessionEvents {
  /** Epoch ms of the session's latest event (0 = none yet). */
  readonly lastEventAt: number;
  /** True while the server's event stream is connected. */
  readonly live: boolean;
  /** Resolves after `ms`, or earlier on an event of this session or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<void>;
  close(): void;
}

interface Subscriber {
  lastEventAt: number;
  wake: (() => void) | undefined;
}

/**
 * One `GET /api/event` stream per client, shared by every run, used as a wake-up and progress
 * hint (text deltas, tool steps). Polling stays the source of truth: if the stream drops or
 * never connects, runs only lose latency. Opened on the first subscriber, closed with the last.
 */
export class EventHub {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private abort: AbortController | undefined;
  private buffer = "";
  live = false;

  constructor(
    private readonly http: OpencodeHttp,
    private readonly now: () => number = Date.now,
  ) {}

  subscribe(sessionId: string): SessionEvents {
    const sub: Subscriber = { lastEventAt: 0, wake: undefined };
    const set = this.subscribers.get(sessionId) ?? new Set<Subscriber>();
    set.add(sub);
    this.subscribers.set(sessionId, set);
    if (!this.abort) this.connect();
    const isLive = () => this.live;
    return {
      get lastEventAt() {
        return sub.lastEventAt;
      },
      get live() {
        return isLive();
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
        if (set.size === 0) this.subscribers.delete(sessionId);
        if (this.subscribers.size === 0) this.disconnect();
      },
    };
  }

  private connect(): void {
    const abort = new AbortController();
    this.abort = abort;
    this.buffer = "";
    void this.http
      .stream("/api/event", abort.signal, (text) => {
        this.live = true;
        this.consume(text);
      })
      .catch(() => undefined)
      .finally(() => {
        this.live = false;
        // Reconnect after a pause while runs still listen; a closed hub stays closed.
        if (this.abort === abort && !abort.signal.aborted) {
          this.abort = undefined;
          setTimeout(() => {
            if (!this.abort && this.subscribers.size > 0) this.connect();
          }, 1_000).unref();
        }
      });
  }

  private disconnect(): void {
    this.abort?.abort();
    this.abort = undefined;
    this.live = false;
  }

  private consume(text: string): void {
    this.buffer += text;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data:")) continue;
      const sessionId = sessionOf(line.slice(5));
      const subs = sessionId ? this.subscribers.get(sessionId) : undefined;
      if (!subs) continue;
      const at = this.now();
      for (const sub of subs) {
        sub.lastEventAt = at;
        sub.wake?.();
      }
    }
  }
}

function sessionOf(json: string): string | undefined {
  try {
    const event = JSON.parse(json) as { data?: { sessionID?: unknown }; durable?: { aggregateID?: unknown } };
    const id = event.data?.sessionID ?? event.durable?.aggregateID;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
