/**
 * Pool benchmark (not a CI test): `pnpm tsx bench/opencode-pool.ts [--smoke]`.
 * Verdict detection latency of one client over a pool of 1 and 5 real `opencode serve` processes
 * (OPENCODE_URLS placement: least loaded, per-server prompt cap), for N concurrent sessions.
 * Detection = client returned − the assistant message's own `time.completed` stamp. Never throws
 * on a failed run: failures are counted in the table.
 */
import { reply, startOpencodeServer, startScriptedModel, type OpencodeServer } from "../packages/testkit/src/index.ts";
import { createOpencodeClient, OpencodeHttp, createCountingDispatcher } from "../packages/opencode/src/index.ts";

const SMOKE = process.argv.includes("--smoke");
const THINK_MS = Number(process.env["THINK_MS"] ?? 2_000);
const SIZES = SMOKE ? [1, 2] : (process.env["SIZES"] ?? "1,10,50").split(",").map(Number);
const POOLS = SMOKE ? [1, 2] : (process.env["POOLS"] ?? "1,5").split(",").map(Number);
const PASSWORD = "bench-pool";
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON of the v2 API
type Json = any;

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? NaN;

const model = await startScriptedModel();
model.setFallback(reply.json({ passed: true, comments: [] }, { delayMs: THINK_MS }));
const servers: OpencodeServer[] = [];
const rows: string[] = [];
try {
  for (const size of POOLS) {
    while (servers.length < size) {
      servers.push(await startOpencodeServer({ provider: { baseUrl: model.url }, password: PASSWORD, agents: { judge: { prompt: "JUDGE", permission: { edit: "deny", bash: "deny" } } } }));
    }
    const pool = servers.slice(0, size);
    const counting = createCountingDispatcher();
    const client = createOpencodeClient({ baseUrl: pool[0]!.url, baseUrls: pool.map((s) => s.url), password: PASSWORD, defaultModel: "fake/scripted", dispatcher: counting.dispatcher });
    const dir = await pool[0]!.makeWorkDir(`pool-${size}`);
    for (const n of SIZES) {
      const results = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const r = await client.runAgent({ agent: "judge", directory: dir, prompt: `p${size}-n${n}-${i}`, policy: {}, idleTimeoutMs: 60_000, hardTimeoutMs: 180_000 });
          return { r, returnedAt: Date.now() };
        }),
      );
      const latencies: number[] = [];
      let failed = 0;
      for (const { r, returnedAt } of results) {
        if (r.outcome !== "ok" || !r.sessionId) {
          failed++;
          continue;
        }
        const http = new OpencodeHttp({ baseUrl: r.serverUrl, password: PASSWORD, dispatcher: counting.dispatcher });
        const messages: Json = await http.json("GET", `/api/session/${r.sessionId}/message?order=desc&limit=5`).catch(() => undefined);
        const completed = messages?.data?.find((m: Json) => m.type === "assistant")?.time?.completed;
        if (typeof completed === "number") latencies.push(returnedAt - completed);
      }
      const spread = new Set(results.map(({ r }) => r.serverUrl)).size;
      rows.push([size, n, spread, pct(latencies, 50), pct(latencies, 99), failed].map(String).join("\t"));
      console.log(`servers=${size} N=${n} done`);
    }
    await client.close();
    await counting.close();
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  await model.close();
}
console.log(`\nopencode-pool bench (model thinks ${THINK_MS} ms; aim at N=50 over 5 servers: p50 ≤ 150 ms, p99 ≤ 400 ms)`);
console.log(["servers", "N", "used", "p50 ms", "p99 ms", "failed"].join("\t"));
for (const row of rows) console.log(row);
