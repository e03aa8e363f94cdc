/**
 * opencode's memory over many tasks (issue 23 item 3), not a CI test: `pnpm bench [--smoke]
 * opencode-memory`. Each task gets a directory of its own (a small git repository, as a task's
 * tree is) and one agent run that writes a file there, three tasks at a time, on a real
 * `opencode serve` with the scripted model. Two servers: one runs as opencode alone ("kept": it
 * keeps ~4 MB of every directory, for good), the other behind deploy/opencode/recycle.mjs with
 * OPENCODE_RECYCLE_MB set to 15% above what the first held after the first 10 tasks, so it is
 * restarted between turns whenever it grows past that. Printed: each server's RSS (its whole
 * process group, the relay included; each the lowest of three readings, as the relay reads it)
 * after the first 10 tasks and after all of them, its low / median / peak while the rest ran, the
 * recycles, and each server's tasks per minute (what the restarts cost). Aim: the recycled server flat
 * within 20% of its RSS after 10 tasks. opencode's own release route (`POST /instance/dispose`)
 * was measured here before and leaves more behind than it frees (100 tasks: 4.1 GB disposed,
 * 1.0 GB kept), so nothing calls it. `--smoke`: 6 tasks, no aims.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createOpencodeClient, type OpencodeClient } from "../packages/opencode/src/index.ts";
import { reply, startOpencodeServer, startScriptedModel, type OpencodeServer } from "../packages/testkit/src/index.ts";
import { benchMain, percentile, ratioRow, type BenchRow } from "./lib/bench-harness.ts";
// @ts-expect-error -- plain ESM shipped beside recycle.mjs, no type declarations
import { steadyGroupRss as steadyGroupRssUntyped } from "../deploy/opencode/group-memory.mjs";

const steadyGroupRss = steadyGroupRssUntyped as (pgid: number, limitBytes: number, opts: { read: () => number }) => Promise<number>;

const AIM_RATIO = 1.2;
const WARM_TASKS = 10;
const IN_FLIGHT = 3;
const RUN = { agent: "dev", policy: {}, idleTimeoutMs: 60_000, hardTimeoutMs: 180_000 };
const MB = 1024 * 1024;

/** RSS of the server's launcher and every process below it (the relay, opencode, what they started). */
function groupRss(server: OpencodeServer): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const line of execFileSync("ps", ["-e", "-o", "pid=,ppid=,rss="]).toString().split("\n")) {
    const [pid, ppid, kb] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined) continue;
    rss.set(pid, (kb ?? 0) * 1024);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  let total = 0;
  const stack = [server.processGroup];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/**
 * The lowest of three readings 50 ms apart: while opencode starts a process the child shows
 * opencode's whole RSS until it execs, and one reading can count the server twice.
 */
function steadyRss(server: OpencodeServer): Promise<number> {
  return steadyGroupRss(server.processGroup, 0, { read: () => groupRss(server) });
}

async function taskDir(server: OpencodeServer, i: number): Promise<string> {
  const dir = await server.makeWorkDir(`task-${i}`);
  await mkdir(join(dir, "src"));
  await Promise.all(Array.from({ length: 20 }, (_, f) => writeFile(join(dir, "src", `m${f}.ts`), `export const m${f} = ${f};\n`)));
  execFileSync("git", ["init", "-q"], { cwd: dir });
  return dir;
}

async function runTasks(server: OpencodeServer, client: OpencodeClient, first: number, count: number, onTask: (done: number) => void): Promise<void> {
  let next = first;
  let done = first;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next++;
        const directory = await taskDir(server, i);
        const result = await client.runAgent({ ...RUN, directory, prompt: `task ${i}: write NOTES.md` });
        if (result.outcome !== "ok")
          throw new Error(
            `task ${i} on ${server.url}: ${result.outcome} ${result.error?.message ?? ""}\nits server's last output:\n${server.output().slice(-4_000)}`,
          );
        onTask(++done);
      }
    }),
  );
}

interface Variant {
  name: string;
  server: OpencodeServer;
  client: OpencodeClient;
  afterWarm: number;
  end: number;
  /** RSS read every SAMPLE_MS while the tasks after the warm-up ran: the recycled one's sawtooth. */
  samples: number[];
  tasksPerMin: number;
}

const SAMPLE_MS = 500;

async function finish(variant: Omit<Variant, "end" | "samples" | "tasksPerMin">, first: number, tasks: number): Promise<Variant> {
  const started = Date.now();
  const samples: number[] = [];
  let running = true;
  const sampling = (async () => {
    while (running) {
      samples.push(await steadyRss(variant.server));
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  try {
    await runTasks(variant.server, variant.client, first, tasks, () => {});
  } finally {
    running = false;
    await sampling;
  }
  return { ...variant, end: await steadyRss(variant.server), samples, tasksPerMin: ((tasks - first) * 60_000) / (Date.now() - started) };
}

/** Lowest, median and highest of the samples, in MB. */
function spread(samples: number[]): string {
  const mb = samples.map((b) => b / MB).sort((a, b) => a - b);
  if (mb.length === 0) return "no samples";
  return `while they ran ${mb[0]!.toFixed(0)} / ${percentile(mb, 50).toFixed(0)} / ${mb.at(-1)!.toFixed(0)} MB (low / median / peak, ${mb.length} samples)`;
}

async function run({ smoke }: { smoke: boolean }): Promise<BenchRow[]> {
  const tasks = smoke ? 6 : Number(process.env["BENCH_MEMORY_TASKS"] ?? 100);
  const warm = Math.min(WARM_TASKS, Math.floor(tasks / 2));
  const model = await startScriptedModel();
  // Each run writes a file (a tool call), then ends with a line of text.
  model.setFallback((req) => (req.messages.some((m) => m.role === "tool") ? reply.text("done") : reply.write("NOTES.md", "notes\n")));
  const agents = { dev: { prompt: "You write notes.", permission: { edit: "allow", bash: "deny" } as const } };
  const servers: OpencodeServer[] = [];
  const clients: OpencodeClient[] = [];
  const connect = (server: OpencodeServer) => {
    servers.push(server);
    const client = createOpencodeClient({ baseUrl: server.url, password: server.password, defaultModel: "fake/scripted" });
    clients.push(client);
    return client;
  };
  try {
    const keptServer = await startOpencodeServer({ provider: { baseUrl: model.url }, agents });
    const keptClient = connect(keptServer);
    await runTasks(keptServer, keptClient, 0, warm, () => {});
    const keptWarm = await steadyRss(keptServer);
    const limitMb = Math.round((keptWarm / MB) * 1.15);
    const recycledServer = await startOpencodeServer({
      provider: { baseUrl: model.url },
      agents,
      env: { OPENCODE_RECYCLE_MB: String(limitMb), OPENCODE_RECYCLE_CHECK_MS: "1000", OPENCODE_RECYCLE_MIN_GAP_MS: "10000" },
    });
    const recycledClient = connect(recycledServer);
    await runTasks(recycledServer, recycledClient, 0, warm, () => {});
    const [kept, recycled] = await Promise.all([
      finish({ name: "kept", server: keptServer, client: keptClient, afterWarm: keptWarm }, warm, tasks),
      finish({ name: `recycled over ${limitMb} MB`, server: recycledServer, client: recycledClient, afterWarm: await steadyRss(recycledServer) }, warm, tasks),
    ]);
    const recycles = (recycledServer.output().match(/"msg":"opencode recycled"/g) ?? []).length;
    for (const r of [kept, recycled]) {
      console.log(
        `${r.name}: RSS after ${warm} tasks ${(r.afterWarm / MB).toFixed(0)} MB, after ${tasks} ${(r.end / MB).toFixed(0)} MB, ${spread(r.samples)}; ${r.tasksPerMin.toFixed(1)} tasks/min after the first ${warm}`,
      );
    }
    console.log(`recycled ${recycles} times`);
    return [
      {
        measure: `opencode RSS after ${tasks} tasks, never restarted (floor: after ${warm})`,
        ours: kept.end / MB,
        floor: kept.afterWarm / MB,
        unit: "MB",
        aim: "—",
        met: null,
        note: "what opencode keeps of every directory",
      },
      ratioRow(
        { smoke },
        {
          measure: `opencode RSS after ${tasks} tasks, recycled over ${limitMb} MB (${recycles}×) (floor: after ${warm})`,
          ours: recycled.end / MB,
          floor: recycled.afterWarm / MB,
          unit: "MB",
          maxRatio: AIM_RATIO,
          // One reading of a sawtooth: it lands anywhere between a fresh server and the limit plus
          // what grows before the next lull; the spread says where the teeth are.
          note: `one reading at the end; ${spread(recycled.samples)}`,
        },
      ),
    ];
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.stop()));
    await model.close();
  }
}

benchMain(import.meta.url, run);
