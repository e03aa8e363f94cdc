/**
 * Verdict-detection benchmark (not a CI test): `pnpm tsx bench/opencode-verdict.ts [--smoke]`.
 * One real opencode serve + a scripted model that "thinks" THINK_MS then answers at once.
 * For N concurrent sessions it measures, for our client and for a naive baseline (polls messages +
 * active every 2 s from a random phase, needs 2 stable polls), in the same run:
 * - detection latency = client returned − the assistant message's `time.completed` (the server's
 *   own stamp, so a server backlog before completion does not count against the client);
 * - HTTP requests per session-second (all requests of the phase, counted by a dispatcher, over the
 *   summed run durations), with a per-route breakdown;
 * - server stall = the slowest `/global/health` answer during the phase (a saturated server).
 * Our client is one long-lived client, as in production (its per-directory warm-up is cached).
 * A run that fails (either side) is counted, never fatal: a saturated server is a result too.
 */
import {
  reply,
  startOpencodeServer,
  startScriptedModel,
  type ScriptedModel,
} from "../packages/testkit/src/index.ts";
import {
  createCountingDispatcher,
  createOpencodeClient,
  OpencodeHttp,
} from "../packages/opencode/src/index.ts";
import { benchMain, percentile as pct, type BenchOptions, type BenchRow } from "./lib/bench-harness.ts";
import { JUDGE_RUN, recording, settle, sleep, withStallProbe, type Json } from "./lib/opencode-probes.ts";

const TARGET = { p50: 150, p99: 400, rate: 5, faster: 10, rateRatio: 3 };

interface Sample {
  sessionId: string;
  returnedAt: number;
  durationMs: number;
}
interface Phase {
  samples: Sample[];
  failures: string[];
  routes: Map<string, number>;
  stallMs: number;
}
type Outcome = Sample | { failure: string };

/** Runs `n` sessions at once; a failed one becomes a counted failure, not an exception. */
async function runAll(
  n: number,
  one: (i: number) => Promise<Sample>,
): Promise<{ samples: Sample[]; failures: string[] }> {
  const outcomes: Outcome[] = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      one(i).catch((err: unknown) => ({ failure: err instanceof Error ? err.message : String(err) })),
    ),
  );
  return {
    samples: outcomes.filter((o): o is Sample => !("failure" in o)),
    failures: outcomes.flatMap((o) => ("failure" in o ? [o.failure] : [])),
  };
}

function runOurs(client: ReturnType<typeof createOpencodeClient>, dir: string, n: number, tag: string) {
  return runAll(n, async (i) => {
    const start = Date.now();
    const r = await client.runAgent({ ...JUDGE_RUN, directory: dir, prompt: `${tag}-${i}` });
    const returnedAt = Date.now();
    if (r.outcome !== "ok") throw new Error(`run ${r.outcome}: ${r.error?.message}`);
    return { sessionId: r.sessionId as string, returnedAt, durationMs: returnedAt - start };
  });
}

function runBaseline(http: OpencodeHttp, dir: string, n: number, tag: string) {
  const call = (method: "GET" | "POST", path: string, body?: unknown): Promise<Json> =>
    http.json(method, path, body);
  return runAll(n, async (i): Promise<Sample> => {
    const start = Date.now();
    const s = await call("POST", "/api/session", {
      agent: "judge",
      model: { providerID: "fake", id: "scripted" },
      location: { directory: dir },
    });
    const admitted = await call("POST", `/api/session/${s.data.id}/prompt`, {
      prompt: { text: `${tag}-${i}` },
    });
    let stable = 0;
    let last = "";
    // A real poller is not in phase with the model's think time: start at a random offset.
    let delay = 1 + Math.random() * 2_000;
    for (;;) {
      await sleep(delay);
      delay = 2_000;
      const msgs = await call("GET", `/api/session/${s.data.id}/message?order=desc&limit=200`);
      const active = await call("GET", "/api/session/active");
      const newest = msgs.data.find(
        (m: Json) => m.type === "assistant" && m.time.created >= admitted.data.timeCreated,
      );
      const sig = newest ? JSON.stringify(newest) : "";
      if (!(s.data.id in active.data) && newest?.time.completed) {
        stable = sig === last ? stable + 1 : 1;
        if (stable >= 2) break;
      } else stable = 0;
      last = sig;
    }
    const returnedAt = Date.now();
    return { sessionId: s.data.id, returnedAt, durationMs: returnedAt - start };
  });
}

/** Detection latency per run: returned − `time.completed` of the turn's newest assistant message. */
async function detections(probe: OpencodeHttp, model: ScriptedModel, samples: Sample[]) {
  const detect: number[] = [];
  const serverLag: number[] = [];
  for (const s of samples) {
    const msgs: Json = await probe
      .json("GET", `/api/session/${s.sessionId}/message?order=desc&limit=5`)
      .catch(() => undefined);
    const completed = msgs?.data?.find((m: Json) => m.type === "assistant")?.time?.completed as
      number | undefined;
    if (completed === undefined) continue; // not measurable: counted with the failures' phase
    detect.push(s.returnedAt - completed);
    const modelEnd = model.requestsFor(s.sessionId).at(-1)?.endedAt;
    if (modelEnd !== undefined) serverLag.push(completed - modelEnd);
  }
  return { detect, serverLag };
}

async function summarize(name: string, phase: Phase, probe: OpencodeHttp, model: ScriptedModel) {
  const { detect, serverLag } = await detections(probe, model, phase.samples);
  const requests = [...phase.routes.values()].reduce((a, b) => a + b, 0);
  const sessionSeconds = phase.samples.reduce((a, s) => a + s.durationMs, 0) / 1_000;
  const rate = requests / sessionSeconds;
  const n = Math.max(1, phase.samples.length);
  const runS = pct(
    phase.samples.map((s) => s.durationMs / 1_000),
    50,
  );
  console.log(
    `  ${name.padEnd(9)} detect p50 ${pct(detect, 50).toFixed(0).padStart(5)} ms  p99 ${pct(detect, 99).toFixed(0).padStart(5)} ms  ` +
      `requests ${String(requests).padStart(5)} (${(requests / n).toFixed(1)}/run, run p50 ${runS.toFixed(1)} s)  ${rate.toFixed(2)} req/session-s  ` +
      `| server: model end → completed p50 ${pct(serverLag, 50).toFixed(0)} ms, stall max ${phase.stallMs} ms`,
  );
  const routes = [...phase.routes.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([r, c]) => `${r} ${(c / n).toFixed(2)}`);
  console.log(`            per run: ${routes.join(", ")}`);
  if (phase.failures.length)
    console.log(
      `            ${phase.failures.length} failed: ${[...new Set(phase.failures)].slice(0, 3).join("; ")}`,
    );
  return { p50: pct(detect, 50), p99: pct(detect, 99), rate, failed: phase.failures.length };
}

function row(
  options: BenchOptions,
  measure: string,
  ours: number,
  floor: number | null,
  unit: string,
  aim: string,
  met: boolean,
): BenchRow {
  return { measure, ours, floor, unit, aim, met: options.smoke ? null : met };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const thinkMs = Number(process.env["THINK_MS"] ?? (options.smoke ? 200 : 2_000));
  const sizes = options.smoke ? [1, 2] : (process.env["SIZES"] ?? "1,10,50").split(",").map(Number);
  const rows: BenchRow[] = [];
  const model = await startScriptedModel();
  model.setFallback(reply.json({ passed: true, comments: [] }, { delayMs: thinkMs }));
  const server = await startOpencodeServer({
    provider: { baseUrl: model.url },
    agents: { judge: { prompt: "You are the bench judge." } },
  });
  const probeDispatcher = createCountingDispatcher();
  const probe = new OpencodeHttp({
    baseUrl: server.url,
    password: server.password,
    dispatcher: probeDispatcher.dispatcher,
  });
  const ours = recording();
  const base = recording();
  const client = createOpencodeClient({
    baseUrl: server.url,
    password: server.password,
    defaultModel: "fake/scripted",
    dispatcher: ours.dispatcher,
  });
  const baseHttp = new OpencodeHttp({
    baseUrl: server.url,
    password: server.password,
    dispatcher: base.dispatcher,
  });
  try {
    const dir = await server.makeWorkDir("bench");
    await client.runAgent({
      agent: "judge",
      directory: dir,
      prompt: "warm-up",
      policy: {},
      idleTimeoutMs: 30_000,
      hardTimeoutMs: 60_000,
    });
    console.log(`opencode-verdict bench: model thinks ${thinkMs} ms then answers instantly`);
    for (const n of sizes) {
      console.log(`N = ${n}`);
      const phase = async (
        rec: ReturnType<typeof recording>,
        work: () => Promise<{ samples: Sample[]; failures: string[] }>,
      ): Promise<Phase> => {
        await settle(probe);
        rec.clear();
        const { value, stallMs } = await withStallProbe([probe], work);
        return { ...value, routes: new Map(rec.routes), stallMs: stallMs[0] ?? NaN };
      };
      const o = await summarize(
        "client",
        await phase(ours, () => runOurs(client, dir, n, `ours-${n}`)),
        probe,
        model,
      );
      const b = await summarize(
        "baseline",
        await phase(base, () => runBaseline(baseHttp, dir, n, `base-${n}`)),
        probe,
        model,
      );
      const rateRatio = o.rate / b.rate;
      console.log(
        `  ratio     detection ${(b.p50 / o.p50).toFixed(1)}× faster (p50), ${(b.p99 / o.p99).toFixed(1)}× (p99); request rate ${rateRatio.toFixed(2)}× baseline`,
      );
      rows.push(
        row(
          options,
          `verdict detection p50, N=${n}`,
          o.p50,
          b.p50,
          "ms",
          `≤ ${TARGET.p50} ms, ≥ ${TARGET.faster}× faster than the 2 s poller`,
          o.p50 <= TARGET.p50 && b.p50 / o.p50 >= TARGET.faster,
        ),
        row(
          options,
          `verdict detection p99, N=${n}`,
          o.p99,
          b.p99,
          "ms",
          `≤ ${TARGET.p99} ms`,
          o.p99 <= TARGET.p99,
        ),
        row(
          options,
          `opencode requests per session-second, N=${n}`,
          o.rate,
          b.rate,
          "req/s",
          `≤ ${TARGET.rate}, ≤ ${TARGET.rateRatio}× the poller`,
          o.rate <= TARGET.rate && rateRatio <= TARGET.rateRatio,
        ),
        {
          ...row(options, `verdict runs failed, N=${n}`, o.failed, null, "runs", "0", o.failed === 0),
          note: `the 2 s poller: ${b.failed} failed`,
        },
      );
    }
  } finally {
    await client.close();
    await Promise.all([ours.close(), base.close(), probeDispatcher.close()]);
    await server.stop();
    await model.close();
  }
  return rows;
}

benchMain(import.meta.url, run);
