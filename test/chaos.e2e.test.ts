import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  makePostgresTemplate,
  startOpencodeServer,
  startScriptedModel,
  type OpencodeServer,
  type ScriptedModel,
} from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrialRow } from "../chaos/report.ts";
import { runTrial } from "../chaos/run-trial.ts";
import { PIPELINE_TRIALS } from "../chaos/pipeline/trials.ts";
import { DIALOGUE_TRIALS } from "../chaos/trials.ts";
import type { Shared } from "../chaos/world.ts";

/**
 * One round of each dialogue trial of `pnpm chaos` (the quick round; `pnpm chaos --runs 10` is the
 * full count) and of two pipeline trials: the services as separate processes, each trial with its
 * own redis-server and Postgres, killed, wiped, stopped and lied to. Nothing a person asked for may
 * be lost, answered or done twice, or left stuck.
 */
const REPO = fileURLToPath(new URL("../", import.meta.url));

/** The pipeline trials CI runs (1-1.5 min each): a kill after the dev's push, and after the review's run. */
const CI_PIPELINE = ["dev-killed-after-push", "reviewer-killed-after-run"].map((name) => {
  const trial = PIPELINE_TRIALS.find((t) => t.name === name);
  if (!trial) throw new Error(`no pipeline trial ${name}`);
  return trial;
});

let model: ScriptedModel;
let opencode: OpencodeServer;
let template: { dir: string; remove(): Promise<void> };
let workspace: string;
let logDir: string;
let shared: Shared;

beforeAll(async () => {
  [model, template, workspace, logDir] = await Promise.all([
    startScriptedModel(),
    makePostgresTemplate(),
    mkdtemp(join(tmpdir(), "ratatoskr-chaos-ws-")),
    mkdtemp(join(tmpdir(), "ratatoskr-chaos-logs-")),
  ]);
  opencode = await startOpencodeServer({ provider: { baseUrl: model.url }, agentsDir: join(REPO, "agents") });
  shared = { model, opencode, pgTemplate: template.dir, workspace, logDir };
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([opencode?.stop(), model?.close()]);
  // The services' logs stay in logDir (named in a failure's message).
  await Promise.allSettled([template?.remove(), rm(workspace, { recursive: true, force: true })]);
});

describe("chaos, one round of each trial run in CI", () => {
  for (const trial of [...DIALOGUE_TRIALS, ...CI_PIPELINE]) {
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
