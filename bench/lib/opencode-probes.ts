/**
 * What the opencode benches share: a dispatcher recording each request's route and latency, an
 * independent listener on a server's event stream (when opencode itself announced a turn's end),
 * a health probe (server stall) and a settle step (no phase inherits another's backlog).
 */
import { createCountingDispatcher, type OpencodeHttp } from "../../packages/opencode/src/index.ts";
import { parseSessionEvent } from "../../packages/opencode/src/run/event-kinds.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON of the v2 API
export type Json = any;

/** One judge run of the benches: generous timeouts, so a saturated server shows as latency, not failure. */
export const JUDGE_RUN = { agent: "judge", policy: {}, idleTimeoutMs: 60_000, hardTimeoutMs: 180_000 };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A counting dispatcher that also records each request's route (ids as ":id") and latency. */
export function recording() {
  const counting = createCountingDispatcher();
  const routes = new Map<string, number>();
  const latencies = new Map<string, number[]>();
  const dispatcher = counting.dispatcher.compose((dispatch) => (opts, handler) => {
    const route = `${opts.method} ${String(opts.path)
      .split("?")[0]
      ?.replace(/\/(ses|per|que|msg)_[A-Za-z0-9]+/g, "/:id")}`;
    routes.set(route, (routes.get(route) ?? 0) + 1);
    if (route === "GET /api/event") return dispatch(opts, handler);
    const at = Date.now();
    let counted = false;
    const took = () => {
      if (counted) return;
      counted = true;
      const list = latencies.get(route) ?? [];
      list.push(Date.now() - at);
      latencies.set(route, list);
    };
    // A proxy (not a copy) keeps the handler's own state and prototype; both end callbacks count.
    const timed = new Proxy(handler, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        const fn = value as (...a: unknown[]) => unknown;
        if (prop !== "onComplete" && prop !== "onResponseEnd") return fn.bind(target);
        return (...args: unknown[]) => {
          took();
          return fn.apply(target, args);
        };
      },
    });
    return dispatch(opts, timed);
  });
  const clear = () => {
    routes.clear();
    latencies.clear();
  };
  return { dispatcher, routes, latencies, clear, close: counting.close };
}

/**
 * Listens to a server's `/api/event` like a bare client would and records, per session, when an
 * event said the turn ended (`endAt`: the server's own announcement) and when one read of the
 * messages right after it returned (`readAt`): the floor no correct client can beat.
 */
export function eventTap(http: OpencodeHttp) {
  const endAt = new Map<string, number>();
  const readAt = new Map<string, number>();
  const reads: Promise<unknown>[] = [];
  const abort = new AbortController();
  let buffer = "";
  const done = http
    .stream("/api/event", abort.signal, (text) => {
      buffer += text;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data:")) continue;
        const event = parseSessionEvent(line.slice(5));
        if (event?.kind !== "end" || endAt.has(event.sessionId)) continue;
        const id = event.sessionId;
        endAt.set(id, Date.now());
        reads.push(
          completedAt(http, id).then((completed) => completed !== undefined && readAt.set(id, Date.now())),
        );
      }
    })
    .catch(() => undefined);
  return {
    endAt,
    readAt,
    close: async () => {
      abort.abort();
      await Promise.all([done, ...reads]);
    },
  };
}

/** Probes `/global/health` every 250 ms while `body` runs; returns the slowest answer per server. */
export async function withStallProbe<T>(
  probes: OpencodeHttp[],
  body: () => Promise<T>,
): Promise<{ value: T; stallMs: number[] }> {
  let stop = false;
  const worst = probes.map(() => 0);
  const loops = probes.map(async (probe, i) => {
    while (!stop) {
      const at = Date.now();
      await probe.json("GET", "/global/health").catch(() => undefined);
      worst[i] = Math.max(worst[i] as number, Date.now() - at);
      await sleep(250);
    }
  });
  try {
    return { value: await body(), stallMs: worst };
  } finally {
    stop = true;
    await Promise.all(loops);
  }
}

/** Waits (≤ 60 s) until no session runs and the server answers quickly, so no phase inherits a backlog. */
export async function settle(probe: OpencodeHttp): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const at = Date.now();
    const active: Json = await probe.json("GET", "/api/session/active").catch(() => undefined);
    if (active && Object.keys(active.data).length === 0 && Date.now() - at < 50) return;
    await sleep(100);
  }
}

/** `time.completed` of the session's newest assistant message (the server's own stamp). */
export async function completedAt(probe: OpencodeHttp, sessionId: string): Promise<number | undefined> {
  const msgs: Json = await probe
    .json("GET", `/api/session/${sessionId}/message?order=desc&limit=5`)
    .catch(() => undefined);
  const completed: unknown = msgs?.data?.find((m: Json) => m.type === "assistant")?.time?.completed;
  return typeof completed === "number" ? completed : undefined;
}
