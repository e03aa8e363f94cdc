/**
 * Pool benchmark (not a CI test): `pnpm bench [--smoke] opencode-pool`, or
 * `pnpm tsx bench/opencode-pool.ts [--smoke]`. Verdict detection latency of one client over a pool
 * of 1 and 5 real `opencode serve` processes (OPENCODE_URLS placement: least loaded, per-server
 * prompt cap), for N concurrent sessions. Detection = client returned − the assistant message's
 * own `time.completed` stamp. The floor, measured in the same phase, is a bare listener on each
 * server's event stream that reads the messages once when opencode announces the turn's end.
 * Printed per phase: where the time goes (model end → completed → end event → returned), request
 * latencies and the slowest health probe. Never throws on a failed run or server: failures are rows.
 * The aim at N=50 over 5 servers is a ratio to that floor (≤ 1.2×), not absolute times: on two
 * cores the floor itself misses 150 ms p50 / 400 ms p99, so an absolute aim measured the machine.
 * `--smoke`: N=1,2 over one pool of 2 servers, a 200 ms think, no aims.
 */
import {
  reply,
  startOpencodeServer,
  startScriptedModel,
  type OpencodeServer,
  type ScriptedModel,
} from "../packages/testkit/src/index.ts";
import { createOpencodeClient, OpencodeHttp, type AgentRunResult } from "../packages/opencode/src/index.ts";
import {
  benchMain,
  percentile as pct,
  ratioRow,
  type BenchOptions,
  type BenchRow,
} from "./lib/bench-harness.ts";
import {
  completedAt,
  eventTap,
  JUDGE_RUN,
  recording,
  settle,
  withStallProbe,
} from "./lib/opencode-probes.ts";

const AIM = { servers: 5, n: 50, maxRatio: 1.2 };
const PASSWORD = "bench-pool";
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(",").map(Number);

interface Run {
  r?: AgentRunResult;
  returnedAt: number;
  failure?: string;
}

const ms = (values: number[]) => `p50 ${pct(values, 50).toFixed(0)} / p99 ${pct(values, 99).toFixed(0)} ms`;

/** One phase: `n` runs at once over `pool`; rows for detection p50/p99 and failures. */
async function phase(
  options: BenchOptions,
  model: ScriptedModel,
  pool: OpencodeServer[],
  client: ReturnType<typeof createOpencodeClient>,
  dir: string,
  n: number,
  rec: ReturnType<typeof recording>,
): Promise<BenchRow[]> {
  const probes = pool.map(
    (s) => new OpencodeHttp({ baseUrl: s.url, password: PASSWORD, dispatcher: rec.dispatcher }),
  );
  await Promise.all(probes.map((p) => settle(p)));
  const taps = probes.map((p) => eventTap(p));
  rec.clear();
  const tag = `s${pool.length}-n${n}`;
  const { value: runs, stallMs } = await withStallProbe(probes, () =>
    Promise.all(
      Array.from({ length: n }, async (_, i): Promise<Run> => {
        try {
          const r = await client.runAgent({ ...JUDGE_RUN, directory: dir, prompt: `${tag}-${i}` });
          return {
            r,
            returnedAt: Date.now(),
            ...(r.outcome === "ok" ? {} : { failure: `${r.outcome}: ${r.error?.message ?? ""}` }),
          };
        } catch (err) {
          return {
            returnedAt: Date.now(),
            failure: `threw: ${err instanceof Error ? err.message : String(err)}`,
          };
        }
      }),
    ),
  );
  const routes = Object.fromEntries([...rec.latencies].map(([route, l]) => [route, l]));
  await Promise.all(taps.map((t) => t.close()));
  const detect: number[] = [];
  const floor: number[] = [];
  const serverLag: number[] = [];
  const eventLag: number[] = [];
  const clientLag: number[] = [];
  const failures = runs.flatMap((run) => (run.failure ? [run.failure] : []));
  for (const { r, returnedAt, failure } of runs) {
    if (failure || !r?.sessionId) continue;
    const at = probes[pool.findIndex((s) => s.url === r.serverUrl)];
    const tap = taps[pool.findIndex((s) => s.url === r.serverUrl)];
    const completed = at ? await completedAt(at, r.sessionId) : undefined;
    if (completed === undefined) {
      failures.push("no completed assistant message");
      continue;
    }
    detect.push(returnedAt - completed);
    const modelEnd = model.requestsFor(r.sessionId).at(-1)?.endedAt;
    if (modelEnd !== undefined) serverLag.push(completed - modelEnd);
    const endAt = tap?.endAt.get(r.sessionId);
    const readAt = tap?.readAt.get(r.sessionId);
    if (endAt !== undefined) eventLag.push(endAt - completed);
    if (endAt !== undefined) clientLag.push(returnedAt - endAt);
    if (readAt !== undefined) floor.push(readAt - completed);
  }
  const used = new Set(runs.map((run) => run.r?.serverUrl).filter(Boolean)).size;
  console.log(
    `servers=${pool.length} (${used} used) N=${n}: detection ${ms(detect)}, floor ${ms(floor)}, ${failures.length} failed`,
  );
  console.log(
    `  model end → completed ${ms(serverLag)}; completed → end event ${ms(eventLag)}; end event → returned ${ms(clientLag)}`,
  );
  const lat = Object.entries(routes)
    .filter(([route]) => route.includes("/active") || route.includes("/message") || route.includes("health"))
    .map(([route, l]) => `${route} ×${l.length} ${ms(l)}`);
  console.log(`  requests: ${lat.join("; ")}; slowest health probe ${Math.max(...stallMs)} ms`);
  if (failures.length) console.log(`  failures: ${[...new Set(failures)].slice(0, 3).join("; ")}`);

  const aimed = !options.smoke && pool.length === AIM.servers && n === AIM.n;
  const label = `N=${n}, ${pool.length} server${pool.length > 1 ? "s" : ""}`;
  const detection = (p: 50 | 99): BenchRow =>
    ratioRow(options, {
      measure: `opencode-pool detection p${p}, ${label}`,
      ours: pct(detect, p),
      floor: pct(floor, p),
      unit: "ms",
      ...(aimed ? { maxRatio: AIM.maxRatio } : {}),
    });
  return [
    detection(50),
    detection(99),
    {
      measure: `opencode-pool failed runs, ${label}`,
      ours: failures.length,
      floor: null,
      unit: "runs",
      aim: "0",
      met: options.smoke ? null : failures.length === 0,
      ...(failures.length ? { note: [...new Set(failures)].slice(0, 2).join("; ").slice(0, 300) } : {}),
    },
  ];
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const thinkMs = Number(process.env["THINK_MS"] ?? (options.smoke ? 200 : 2_000));
  const sizes = options.smoke ? [1, 2] : list("SIZES", "1,10,50");
  // The smoke proves placement over a pool with the fewest server boots (each costs seconds).
  const pools = options.smoke ? [2] : list("POOLS", "1,5");
  const rows: BenchRow[] = [];
  const model = await startScriptedModel();
  model.setFallback(reply.json({ passed: true, comments: [] }, { delayMs: thinkMs }));
  const servers: OpencodeServer[] = [];
  const rec = recording();
  console.log(`opencode-pool bench: model thinks ${thinkMs} ms then answers at once`);
  try {
    for (const size of pools) {
      try {
        const started = await Promise.all(
          Array.from({ length: size - servers.length }, () =>
            startOpencodeServer({
              provider: { baseUrl: model.url },
              password: PASSWORD,
              startTimeoutMs: 120_000,
              agents: { judge: { prompt: "JUDGE", permission: { edit: "deny", bash: "deny" } } },
            }),
          ),
        );
        servers.push(...started);
      } catch (err) {
        rows.push({
          measure: `opencode-pool, ${size} servers`,
          ours: NaN,
          floor: null,
          unit: "",
          aim: "—",
          met: options.smoke ? null : false,
          note: `servers did not start: ${String(err).slice(0, 200)}`,
        });
        continue;
      }
      const pool = servers.slice(0, size);
      const pooled = createOpencodeClient({
        baseUrl: pool[0]!.url,
        baseUrls: pool.map((s) => s.url),
        password: PASSWORD,
        defaultModel: "fake/scripted",
        dispatcher: rec.dispatcher,
      });
      const dir = await pool[0]!.makeWorkDir(`pool-${size}`);
      try {
        // Each server boots the directory once (as a long-lived service would have): not measured.
        await Promise.all(
          pool.map(() =>
            pooled.runAgent({ ...JUDGE_RUN, directory: dir, prompt: "warm-up" }).catch(() => undefined),
          ),
        );
        for (const n of sizes) rows.push(...(await phase(options, model, pool, pooled, dir, n, rec)));
      } finally {
        await pooled.close();
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await rec.close();
    await model.close();
  }
  return rows;
}

benchMain(import.meta.url, run);
