import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makePostgresTemplate, startTestOpencode, type OpencodeServer, type ScriptedModel } from "@ratatoskr/testkit";
import { QUICK_JOB_LOCKS } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrialRow } from "../../chaos/report.ts";
import { runTrial } from "../../chaos/run-trial.ts";
import { PIPELINE_TRIALS } from "../../chaos/pipeline/trials.ts";
import { DIALOGUE_TRIALS } from "../../chaos/trials.ts";
import type { Shared } from "../../chaos/world.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** CI's round: every dialogue trial, two pipeline trials that kill after an outside effect, and the delivery wipe. */
export const CI_GROUPS = {
  kills: {
    title: "chaos: services killed, Redis wiped or restarted",
    names: ["ingress-killed", "analyst-killed", "notifier-killed", "redis-wiped", "redis-restarted"],
  },
  outages: {
    title: "chaos: Postgres stopped, Telegram slow or lying",
    names: ["postgres-stopped", "telegram-slow", "telegram-reset", "updates-replayed", "webhook-duplicate"],
  },
  pipeline: {
    title: "chaos: the pipeline killed right after an outside effect, or its deliveries wiped from Redis",
    names: ["dev-killed-after-push", "reviewer-killed-after-run", "redis-wiped-before-delivery"],
  },
} as const;

/** Dialogue trials no CI file runs (a new one must join a group). */
export const dialogueTrialsLeftOut = (): string[] =>
  DIALOGUE_TRIALS.map((t) => t.name).filter(
    (name) => !Object.values(CI_GROUPS).some((g) => (g.names as readonly string[]).includes(name)),
  );

/**
 * One round of the named trials of `pnpm chaos` (the quick round; `pnpm chaos --runs 10` is the
 * full count): the services as separate processes, each trial with its own redis-server and
 * Postgres, killed, wiped, stopped and lied to. Nothing a person asked for may be lost, answered
 * or done twice, or left stuck. CI's trials are spread over a few files (1-2.5 min each) so that
 * they run beside the rest of the suite rather than after it.
 */
export function chaosSuite(group: keyof typeof CI_GROUPS): void {
  const { title, names } = CI_GROUPS[group];
  const trials = names.map((name) => {
    const trial = [...DIALOGUE_TRIALS, ...PIPELINE_TRIALS].find((t) => t.name === name);
    if (!trial) throw new Error(`no chaos trial ${name}`);
    return trial;
  });
  let model: ScriptedModel;
  let opencode: OpencodeServer;
  let template: { dir: string; remove(): Promise<void> };
  let workspace: string;
  let logDir: string;
  let shared: Shared;

  beforeAll(async () => {
    [template, workspace, logDir] = await Promise.all([
      makePostgresTemplate(),
      mkdtemp(join(tmpdir(), "ratatoskr-chaos-ws-")),
      mkdtemp(join(tmpdir(), "ratatoskr-chaos-logs-")),
    ]);
    ({ model, opencode } = await startTestOpencode({ agentsDir: join(REPO, "agents"), claims: [workspace] }));
    // A killed service's job is taken up after ~7 s instead of ~25 s: the same recovery, sooner.
    // `pnpm chaos` keeps the defaults, so the recovery times it reports are a deployment's.
    shared = { model, opencode, pgTemplate: template.dir, workspace, logDir, serviceEnv: QUICK_JOB_LOCKS };
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([opencode?.stop(), model?.close()]);
    // The services' logs stay in logDir (named in a failure's message).
    await Promise.allSettled([template?.remove(), rm(workspace, { recursive: true, force: true })]);
  });

  describe(title, () => {
    for (const trial of trials) {
      it(
        `${trial.name}: ${trial.fault}`,
        async () => {
          const log: string[] = [];
          const row: TrialRow = await runTrial(trial, 1, shared, (line) => log.push(line));
          expect(
            { error: row.error, lost: row.lost, duplicated: row.duplicated, stuck: row.stuck },
            `${log.join("\n")}\nservice logs: ${join(logDir, trial.name)}`,
          ).toEqual({ error: undefined, lost: 0, duplicated: 0, stuck: 0 });
          expect(row.runs).toBe(1);
        },
        trial.world?.pipeline ? 480_000 : 300_000,
      );
    }
  });
}
