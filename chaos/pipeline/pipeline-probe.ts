import { isFinal, storedStatus } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import { gitFixture, type FakeGitea, type ScriptedModel } from "@ratatoskr/testkit";
import { newMark, type Judgement, type Probe } from "../probes.ts";
import type { RoundContext } from "../trial.ts";
import type { World } from "../world.ts";
import {
  paidCalls,
  scriptPipeline,
  type Agent,
  type Holds,
  type Paid,
  type PipelineScript,
  type Plan,
} from "./script.ts";

export type Door = "telegram" | "gitea";

/** What a trial's hold knows of a probe before its request is made. */
export interface Target {
  door: Door;
  script: PipelineScript;
  /** The bare repository on the fake Gitea the probe's work is pushed to. */
  bare: string;
  /** Telegram: the person's chat. */
  chatId?: number;
  /** Gitea: the issue the command is on. */
  issue?: number;
  /** The probe's task once its door created it. */
  task(): Promise<Task | null>;
}

/** The worst moment of one probe, for the trial to kill a service at. */
export interface Moment {
  /** Resolves once the probe is there (its effect made and held); rejects when it never came. */
  reached: Promise<void>;
  /** Lets what was held go; safe before the moment and more than once. */
  release(): Promise<void>;
}

export interface Armed {
  moment?: Moment;
  holds?: Holds;
}

/** Sets up a trial's hold on a probe before its request is made (nothing when it is not for that door). */
export type Arm = (target: Target, ctx: RoundContext) => Promise<Armed>;

/** A probe through the pipeline, with the moment its trial waits for. */
export interface PipelineProbe extends Probe {
  moment: Moment | undefined;
}

export const gitea = (world: World): FakeGitea => {
  if (!world.gitea) throw new Error("chaos: this world has no pipeline (no fake Gitea)");
  return world.gitea;
};

/**
 * A repository of the probe's own on the fake Gitea (`acme/<trial>-m<n>`), whose bare copy logs
 * every ref update: a second push of the branch would show.
 */
export async function probeRepo(
  ctx: RoundContext,
  plan: Plan,
  drafted: boolean,
): Promise<{ script: PipelineScript; bare: string }> {
  const { mark, slug } = newMark(ctx.trial);
  const repo = `acme/${slug}`;
  const host = gitea(ctx.world);
  await host.createRepo(repo, { "README.md": `# ${slug}\n` });
  const bare = host.bareDir(repo);
  await gitFixture(bare, ["config", "core.logAllRefUpdates", "always"]);
  return { script: { mark, repo, plan, drafted }, bare };
}

/** Arms the trial's hold on the probe and scripts its pipeline; returns its moment and price. */
export async function armAndScript(
  ctx: RoundContext,
  target: Target,
  arm: Arm,
): Promise<{ moment: Moment | undefined; paid: Paid }> {
  const { moment, holds = {} } = await arm(target, ctx);
  return { moment, paid: scriptPipeline(ctx.model, target.script, holds) };
}

/** Pushes the remote took on `branch` (0 when it does not exist). */
async function pushes(bare: string, branch: string | null): Promise<number> {
  if (!branch) return 0;
  const log = await gitFixture(bare, ["reflog", "show", "--format=%H", `refs/heads/${branch}`]).catch(
    () => "",
  );
  return log.split("\n").filter(Boolean).length;
}

/** What the person saw at their door: when the answer came, what they saw twice, what never came. */
export interface DoorView {
  answeredAt: number | undefined;
  duplicated: string[];
  /** Messages stored for the person and not delivered (or a status shown that is not the task's). */
  unsent: string[];
}

/**
 * What the task of a probe shows, for every door: it reached its end once, the branch took one
 * push, the model was paid once per call, and nothing is left running; `seen` is the door's own
 * view (its messages or comments).
 */
export async function judgeTask(
  world: World,
  model: ScriptedModel,
  target: Target,
  paid: Paid,
  seen: (task: Task) => Promise<DoorView>,
): Promise<Judgement> {
  const task = await target.task();
  if (!task) return { answeredAt: undefined, lost: "no task was created" };
  const view = await seen(task);
  const reason = task.failureReason ? `: ${task.failureReason}` : "";
  const judgement: Judgement = {
    answeredAt: view.answeredAt,
    lost: `task #${task.id} is ${task.status}${reason}`,
  };
  const duplicated = [...view.duplicated];
  const end = target.script.plan === "success" ? "success" : "failed";
  const ends = await world.db.prisma.taskEvent.count({
    where: { taskId: task.id, toStatus: end, NOT: { fromStatus: end } },
  });
  if (ends > 1) duplicated.push(`became ${end} ${ends} times`);
  const pushed = await pushes(target.bare, task.branch);
  if (pushed > 1) duplicated.push(`${task.branch} pushed ${pushed} times`);
  const calls = paidCalls(model, target.script.mark);
  for (const agent of Object.keys(paid) as Agent[])
    if (calls[agent] > paid[agent])
      duplicated.push(`the ${agent}'s model paid ${calls[agent]} calls, not ${paid[agent]}`);
  if (duplicated.length > 0) judgement.duplicated = duplicated.join(", ");
  const stuck = [
    ...(isFinal(storedStatus(task.status)) ? [] : [`task #${task.id} is ${task.status}`]),
    ...view.unsent,
  ];
  if (stuck.length > 0) judgement.stuck = stuck.join(", ");
  return judgement;
}
