import type { Task } from "@ratatoskr/db";
import type { FakeGitea } from "@ratatoskr/testkit";
import type { RoundContext } from "../trial.ts";
import type { World } from "../world.ts";
import {
  armAndScript,
  gitea,
  judgeTask,
  probeRepo,
  type Arm,
  type DoorView,
  type PipelineProbe,
  type Target,
} from "./pipeline-probe.ts";
import { titleOf, type PipelineScript, type Plan } from "./script.ts";

/** The hidden markers of the bot's comments: a command's status comment, a reply such as the postmortem. */
const STATUS_MARKER = "ratatoskr:status task=";
const REPLY_MARKER = "ratatoskr:reply";
/** The status comment's headline at the end of each plan. */
const ENDED: Record<Plan, string> = { success: "✅ done", failure: "❌ failed" };

const bodyHas = (marker: string) => (c: { body?: string }) => (c.body ?? "").includes(marker);

/** The bot's status comments on the issue (a command has one, edited as it goes). */
export function statusComments(host: FakeGitea, script: PipelineScript, issue: number) {
  return host.commentsOf(script.repo, issue).filter(bodyHas(STATUS_MARKER));
}

/** Pull requests opened in the probe's repository. */
export function pullsOf(host: FakeGitea, script: PipelineScript) {
  const [owner = "", name = ""] = script.repo.split("/");
  return host.issues.pulls(host.repos.find(owner, name)!);
}

/**
 * What the team sees on the issue: the status comment saying done with the PR opened (success), or
 * the postmortem's reply (failure); and whether any of them is there twice.
 */
function issueView(host: FakeGitea, script: PipelineScript, issue: number): Omit<DoorView, "unsent"> {
  const statuses = statusComments(host, script, issue);
  const replies = host.commentsOf(script.repo, issue).filter(bodyHas(REPLY_MARKER));
  const pulls = pullsOf(host, script);
  const duplicated = [
    ...(statuses.length > 1 ? [`${statuses.length} status comments`] : []),
    ...(replies.length > 1 ? [`${replies.length} replies`] : []),
    ...(pulls.length > 1 ? [`${pulls.length} pull requests`] : []),
  ];
  const done = statuses.find(bodyHas(ENDED.success));
  const answer =
    script.plan === "success" ? (pulls.length > 0 ? done?.updated_at : undefined) : replies[0]?.created_at;
  return { answeredAt: answer === undefined ? undefined : Date.parse(answer), duplicated };
}

/**
 * What the team was never shown: a reply (the postmortem) stored and not posted, or a status
 * comment that does not show how the command ended. A command's other messages live in its status
 * comment, not in messages of their own.
 */
async function notShown(
  world: World,
  host: FakeGitea,
  script: PipelineScript,
  issue: number,
  task: Task,
): Promise<string[]> {
  const where = {
    taskId: task.id,
    template: { startsWith: "task.postmortem" },
    status: { in: ["pending", "sending"] },
  };
  const replies = await world.db.prisma.notification.count({ where });
  const shown = statusComments(host, script, issue).at(-1)?.body ?? "";
  return [
    ...(replies > 0 ? [`${replies} reply(ies) unposted`] : []),
    ...(shown.includes(ENDED[script.plan])
      ? []
      : [`the status comment does not say “${ENDED[script.plan]}”`]),
  ];
}

/** Someone with write access comments `/agent implement` on an issue of the probe's own. */
export async function startCommandProbe(ctx: RoundContext, plan: Plan, arm: Arm): Promise<PipelineProbe> {
  const { world, model } = ctx;
  const host = gitea(world);
  const { script, bare } = await probeRepo(ctx, plan, false);
  host.setPermission(script.repo, "alice", "write");
  const issue = host.addIssue(script.repo, titleOf(script.mark), "Add done.txt, please.").number!;
  const [repoOwner, repoName] = script.repo.split("/");
  const target: Target = {
    door: "gitea",
    script,
    bare,
    issue,
    task: () =>
      world.db.prisma.task.findFirst({
        where: { repoOwner, repoName, targetNumber: issue },
        orderBy: { id: "asc" },
      }),
  };
  const { moment, paid } = await armAndScript(ctx, target, arm);
  await host.comment(script.repo, issue, "alice", "/agent implement");
  return {
    mark: script.mark,
    moment,
    answeredAt: () => issueView(host, script, issue).answeredAt,
    judge: () =>
      judgeTask(world, model, target, paid, async (task) => ({
        ...issueView(host, script, issue),
        unsent: await notShown(world, host, script, issue, task),
      })),
  };
}
