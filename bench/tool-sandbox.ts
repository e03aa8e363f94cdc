/**
 * What the tool sandbox costs per tool call (not a CI test): `pnpm tsx bench/tool-sandbox.ts [--smoke]`.
 *
 * - process: the sandbox shell (deploy/opencode/sandbox/bash: env -i bwrap with its own PID, IPC,
 *   UTS and network namespaces and /proc) running `true` and `git status` in a task's working
 *   tree, against plain `/bin/bash -c` as the floor: the sandbox's own start-up cost.
 * - tool call: a scripted agent's bash tool calls through a real opencode serve, sandboxed against
 *   an opencode serve whose commands run unsandboxed (RATATOSKR_SANDBOX=off): what an agent's
 *   turn pays for the sandbox, model round trip and opencode's own work included.
 * Both interleave the variants round by round and report medians.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpencodeClient } from "../packages/opencode/src/index.ts";
import { reply, SANDBOX_SHELL, sandboxRequired, startOpencodeServer, startScriptedModel, toolSandboxSupport, type OpencodeServer, type ScriptedModel } from "../packages/testkit/src/index.ts";
import { benchMain, interleave, median, ratioRow, type BenchOptions, type BenchRow } from "./lib/bench-harness.ts";

const quiet = { warn: () => {}, debug: () => {} };

/** Median ms of one spawn of `file args` in `cwd`, over `count` spawns. */
function spawnMs(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, count: number): number {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const run = spawnSync(file, args, { cwd, env, stdio: "ignore" });
    if (run.status !== 0) throw new Error(`${file} ${args.join(" ")} exited ${run.status}`);
    times.push(performance.now() - started);
  }
  return median(times);
}

async function processLevel(options: BenchOptions): Promise<BenchRow[]> {
  const root = mkdtempSync(join(tmpdir(), "ratatoskr-bench-sandbox-"));
  const task = join(root, "tasks", "1-bench");
  mkdirSync(join(task, "acme", "web"), { recursive: true });
  execFileSync("git", ["init", "-q", join(task, "acme", "web")]);
  const env = { PATH: process.env["PATH"], RATATOSKR_SANDBOX_ROOTS: join(root, "tasks") };
  const rounds = options.smoke ? 2 : 10;
  const perRound = options.smoke ? 3 : 10;
  try {
    const rows: BenchRow[] = [];
    for (const [what, command] of [["true", "true"], ["git status", "git -C acme/web status --short"]] as const) {
      const r = await interleave(rounds, {
        sandboxed: async () => spawnMs(SANDBOX_SHELL, ["-c", command], task, env, perRound),
        plain: async () => spawnMs("/bin/bash", ["-c", command], task, env, perRound),
      });
      const ours = median(r.sandboxed);
      const floor = median(r.plain);
      rows.push(
        ratioRow(options, {
          measure: `shell command \`${what}\`, sandboxed vs plain bash`,
          ours,
          floor,
          unit: "ms",
          note: `the sandbox adds ${(ours - floor).toFixed(1)} ms per command`,
        }),
      );
    }
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** ms per bash tool call of one agent turn making `calls` of them. */
async function turnMs(server: OpencodeServer, model: ScriptedModel, calls: number, tag: string): Promise<number> {
  const client = createOpencodeClient({ baseUrl: server.url, password: server.password, logger: quiet });
  try {
    const dir = await server.makeWorkDir(tag);
    model.addRule({ match: { promptIncludes: tag }, reply: [...Array.from({ length: calls }, () => reply.bash("true")), reply.text("done")] });
    const started = performance.now();
    const result = await client.runAgent({ agent: "bench", directory: dir, prompt: tag, policy: { permissions: { bash: "allow" } }, idleTimeoutMs: 60_000, hardTimeoutMs: 300_000 });
    if (result.outcome !== "ok") throw new Error(`bench turn ended ${result.outcome}: ${result.error?.message}`);
    return (performance.now() - started) / calls;
  } finally {
    await client.close();
  }
}

async function toolCallLevel(options: BenchOptions): Promise<BenchRow[]> {
  const model = await startScriptedModel();
  const agents = { bench: { prompt: "You are the BENCH agent.", permission: { bash: "allow" as const } } };
  const servers: OpencodeServer[] = [];
  try {
    servers.push(await startOpencodeServer({ provider: { baseUrl: model.url }, agents, toolSandbox: "required", startTimeoutMs: 120_000 }));
    servers.push(await startOpencodeServer({ provider: { baseUrl: model.url }, agents, toolSandbox: "off", startTimeoutMs: 120_000 }));
    const [sandboxed, unsandboxed] = servers as [OpencodeServer, OpencodeServer];
    const calls = options.smoke ? 2 : 10;
    // One warm-up turn each: opencode boots a directory's instance on its first session.
    await turnMs(sandboxed, model, 1, "warm-sandboxed");
    await turnMs(unsandboxed, model, 1, "warm-unsandboxed");
    let round = 0;
    // A turn that fails (opencode once ended one with "HTTP transport failed" under a full bench's
    // load) costs its round, not the row: the medians are of the turns that finished, and the
    // note says how many did not and why.
    const failures: string[] = [];
    const sample = (turn: Promise<number>) =>
      turn.catch((err: unknown) => {
        failures.push(err instanceof Error ? err.message : String(err));
        return NaN;
      });
    const r = await interleave(options.smoke ? 1 : 5, {
      sandboxed: () => sample(turnMs(sandboxed, model, calls, `sandboxed-${round++}`)),
      unsandboxed: () => sample(turnMs(unsandboxed, model, calls, `unsandboxed-${round++}`)),
    });
    const ours = median(r.sandboxed.filter(Number.isFinite));
    const floor = median(r.unsandboxed.filter(Number.isFinite));
    const failed = failures.length > 0 ? `; ${failures.length} turn(s) failed and were left out (${failures[0]})` : "";
    return [
      ratioRow(options, {
        measure: "bash tool call through opencode, sandboxed vs unsandboxed",
        ours,
        floor,
        unit: "ms",
        maxRatio: 1.5,
        note: `the sandbox adds ${(ours - floor).toFixed(1)} ms per tool call (model round trip included in both)${failed}`,
      }),
    ];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await model.close();
  }
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const support = toolSandboxSupport();
  if (!support.ok && sandboxRequired()) throw new Error(`the tool sandbox cannot run here: ${support.why}`);
  if (!support.ok) {
    console.error(`tool-sandbox bench skipped: the sandbox cannot run here (${support.why}); apt-get install bubblewrap`);
    return [];
  }
  const rows = await processLevel(options);
  // The shell rows stand on their own: a tool-call level that cannot run says so in its row.
  const toolCall = await toolCallLevel(options).catch((err: unknown): BenchRow[] => [
    {
      measure: "bash tool call through opencode, sandboxed vs unsandboxed",
      ours: NaN,
      floor: null,
      unit: "ms",
      aim: "≤ 1.5× floor",
      met: options.smoke ? null : false,
      note: `failed: ${err instanceof Error ? err.message : String(err)}`,
    },
  ]);
  return [...rows, ...toolCall];
}

benchMain(import.meta.url, run);
