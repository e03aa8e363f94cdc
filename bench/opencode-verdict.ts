/**
 * Verdict-detection benchmark (not a CI test): `pnpm tsx bench/opencode-verdict.ts`.
 * One real opencode serve + a scripted model that "thinks" THINK_MS then answers at once.
 * For N concurrent sessions it measures (a) detection latency = client returned − model response
 * end, (b) HTTP requests per session-second, for our client and for a naive baseline that polls
 * messages + active every 2 s and needs 2 stable polls.
 */
import { reply, startOpencodeServer, startScriptedModel, type ScriptedModel } from "../packages/testkit/src/index.ts";
import { createCountingDispatcher, createOpencodeClient, OpencodeHttp } from "../packages/opencode/src/index.ts";

const THINK_MS = Number(process.env["THINK_MS"] ?? 2_000);
const SIZES = (process.env["SIZES"] ?? "1,10,50").split(",").map(Number);

function counting() {
  const c = createCountingDispatcher();
  return { dispatcher: c.dispatcher, count: c.requests, close: c.close };
}

interface Sample {
  detectMs: number;
  durationMs: number;
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

function endOf(model: ScriptedModel, sessionId: string): number {
  return model.requestsFor(sessionId).at(-1)?.endedAt ?? NaN;
}

async function runOurs(url: string, password: string, dir: string, model: ScriptedModel, n: number, tag: string) {
  const { dispatcher, count, close } = counting();
  const client = createOpencodeClient({ baseUrl: url, password, defaultModel: "fake/scripted", dispatcher });
  const before = count();
  const samples = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const start = Date.now();
      const r = await client.runAgent({ agent: "judge", directory: dir, prompt: `${tag}-${i}`, policy: {}, idleTimeoutMs: 60_000, hardTimeoutMs: 120_000 });
      const at = Date.now();
      if (r.outcome !== "ok") throw new Error(`run failed: ${r.error?.message}`);
      return { detectMs: at - endOf(model, r.sessionId as string), durationMs: at - start };
    }),
  );
  const requests = count() - before;
  await client.close();
  await close();
  return { samples, requests };
}

async function runBaseline(url: string, password: string, dir: string, model: ScriptedModel, n: number, tag: string) {
  const { dispatcher, count, close } = counting();
  const http = new OpencodeHttp({ baseUrl: url, password, dispatcher });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the naive baseline reads raw JSON
  const call = (method: "GET" | "POST", path: string, body?: unknown): Promise<any> => http.json(method, path, body);
  const before = count();
  const samples = await Promise.all(
    Array.from({ length: n }, async (_, i): Promise<Sample> => {
      const start = Date.now();
      const s = await call("POST", "/api/session", { agent: "judge", model: { providerID: "fake", id: "scripted" }, location: { directory: dir } });
      const admitted = await call("POST", `/api/session/${s.data.id}/prompt`, { prompt: { text: `${tag}-${i}` } });
      let stable = 0;
      let last = "";
      for (;;) {
        await new Promise((r) => setTimeout(r, 2_000));
        const msgs = await call("GET", `/api/session/${s.data.id}/message?order=desc&limit=200`);
        const active = await call("GET", "/api/session/active");
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const newest = msgs.data.find((m: any) => m.type === "assistant" && m.time.created >= admitted.data.timeCreated);
        const sig = newest ? JSON.stringify(newest) : "";
        if (!(s.data.id in active.data) && newest?.time.completed) {
          stable = sig === last ? stable + 1 : 1;
          if (stable >= 2) break;
        } else stable = 0;
        last = sig;
      }
      const at = Date.now();
      return { detectMs: at - endOf(model, s.data.id), durationMs: at - start };
    }),
  );
  const requests = count() - before;
  await close();
  return { samples, requests };
}

function summarize(name: string, r: { samples: Sample[]; requests: number }) {
  const detect = r.samples.map((s) => s.detectMs);
  const sessionSeconds = r.samples.reduce((a, s) => a + s.durationMs, 0) / 1_000;
  const rate = r.requests / sessionSeconds;
  console.log(`  ${name.padEnd(9)} detect p50 ${pct(detect, 50).toFixed(0).padStart(5)} ms  p99 ${pct(detect, 99).toFixed(0).padStart(5)} ms  requests ${String(r.requests).padStart(5)}  ${rate.toFixed(2)} req/session-s`);
  return { p50: pct(detect, 50), p99: pct(detect, 99), rate };
}

const model = await startScriptedModel();
model.setFallback(reply.json({ passed: true, comments: [] }, { delayMs: THINK_MS }));
const server = await startOpencodeServer({ provider: { baseUrl: model.url }, agents: { judge: { prompt: "You are the bench judge." } } });
try {
  const dir = await server.makeWorkDir("bench");
  const warm = createOpencodeClient({ baseUrl: server.url, password: server.password, defaultModel: "fake/scripted" });
  await warm.runAgent({ agent: "judge", directory: dir, prompt: "warm-up", policy: {}, idleTimeoutMs: 30_000, hardTimeoutMs: 60_000 });
  await warm.close();
  console.log(`opencode-verdict bench: model thinks ${THINK_MS} ms then answers instantly`);
  for (const n of SIZES) {
    console.log(`N = ${n}`);
    const ours = summarize("client", await runOurs(server.url, server.password, dir, model, n, `ours-${n}`));
    const base = summarize("baseline", await runBaseline(server.url, server.password, dir, model, n, `base-${n}`));
    console.log(`  ratio     detection ${(base.p50 / ours.p50).toFixed(1)}× faster (p50), ${(base.p99 / ours.p99).toFixed(1)}× (p99); request rate ${(ours.rate / base.rate).toFixed(2)}× baseline`);
  }
} finally {
  await server.stop();
  await model.close();
}
