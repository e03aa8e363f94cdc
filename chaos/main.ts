/**
 * `pnpm chaos [--runs N | --quick] [trial …]`: fault trials against the services as separate
 * processes, each trial with its own redis-server and Postgres on free ports, a fake Telegram
 * behind a misbehaving proxy, a real opencode and the scripted model; the pipeline trials add dev,
 * reviewer, postmortem and a fake Gitea (the git host and the second door). Prints a table of
 * runs, lost, duplicated and stuck probes and recovery time; exits 1 when any trial failed.
 * `--help` lists the trials.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makePostgresTemplate, startOpencodeServer, startScriptedModel } from "@ratatoskr/testkit";
import { parseArgs, usage } from "./args.ts";
import { formatTable, passed, type TrialRow } from "./report.ts";
import { runTrial } from "./run-trial.ts";
import { TRIALS } from "./trials.ts";
import { openWorlds } from "./world.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const args = parseArgs(process.argv.slice(2));
if (args.help) {
  process.stdout.write(`${usage(TRIALS)}\n`);
  process.exit(0);
}
const trials = TRIALS.filter((t) => args.only.length === 0 || args.only.includes(t.name));
const unknown = args.only.filter((name) => !TRIALS.some((t) => t.name === name));
if (unknown.length > 0) throw new Error(`no such trial: ${unknown.join(", ")}\n${usage(TRIALS)}`);

const logDir = join(REPO, ".tmp", "chaos", new Date().toISOString().replace(/[:.]/g, "-"));
await mkdir(logDir, { recursive: true });
const [model, template, workspace] = await Promise.all([
  startScriptedModel(),
  makePostgresTemplate(),
  mkdtemp(join(tmpdir(), "ratatoskr-chaos-ws-")),
]);
const opencode = await startOpencodeServer({
  provider: { baseUrl: model.url },
  agentsDir: join(REPO, "agents"),
});
const shared = { model, opencode, pgTemplate: template.dir, workspace, logDir };
const tearDown = async () => {
  await Promise.allSettled([...openWorlds].map((world) => world.close()));
  await Promise.allSettled([opencode.stop(), model.close()]);
  await Promise.allSettled([template.remove(), rm(workspace, { recursive: true, force: true })]);
};
// Ctrl-C must not leave a trial's redis-server and Postgres (started detached) running.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    log(`${signal}: stopping the trial's services, Redis and Postgres`);
    void tearDown().finally(() => process.exit(130));
  });
log(`${trials.length} trial(s), ${args.runs} run(s) each; service logs in ${logDir}`);

const rows: TrialRow[] = [];
try {
  for (const trial of trials) {
    const started = Date.now();
    rows.push(await runTrial(trial, args.runs, shared, log));
    log(`${trial.name} done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
} finally {
  await tearDown();
}
process.stdout.write(`\n${formatTable(rows)}\n`);
const failed = rows.filter((r) => !passed(r));
for (const row of failed) if (row.error) process.stdout.write(`${row.trial}: ${row.error}\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
