import { formatFinding, IllegalTransitionError, reviewFindingSchema, type TaskEvent } from "@ratatoskr/contracts";
import type { Task, TaskPatch } from "@ratatoskr/db";
import { GiteaApiError, type PullRequest } from "@ratatoskr/gitea";
import { skipped } from "@ratatoskr/runtime";
import { z } from "zod";
import type { IntakeDeps } from "./intake-deps.ts";

const devFinished = z.object({ summary: z.string(), testsRun: z.string().optional() });
const devFinishedWithCommit = devFinished.extend({ commit: z.string() });
const reviewPassed = z.object({ minor: z.array(reviewFindingSchema) });

interface StoredEvent {
  type: string;
  payload: unknown;
}

function latest<T>(events: readonly StoredEvent[], type: string, schema: z.ZodType<T>): T | undefined {
  const found = events.filter((e) => e.type === type).at(-1);
  const parsed = schema.safeParse(found?.payload);
  return parsed.success ? parsed.data : undefined;
}

/** The PR description of `/agent implement`: closes the issue, says what was done and checked. Pure. */
export function pullRequestBody(task: Task, events: readonly StoredEvent[]): string {
  const report = latest(events, "dev.finished", devFinished);
  const minor = latest(events, "review.passed", reviewPassed)?.minor ?? [];
  return [
    `Closes #${task.targetNumber}`,
    "",
    `Requested by @${task.requesterLogin ?? "?"} with \`/agent implement\` (command #${task.id}); reviewed in ${task.round} round${task.round === 1 ? "" : "s"}.`,
    "",
    "## Summary",
    report?.summary?.trim() || "(the agent gave no summary)",
    "",
    "## Checks the agent ran",
    report?.testsRun?.trim() || "(none reported)",
    ...(minor.length > 0 ? ["", "## Remaining minor findings", ...minor.map((f) => `- ${formatFinding(f)}`)] : []),
  ].join("\n");
}

/** Hidden in a posted plan/answer: the same answer is never posted twice by a retried job. */
export function answerMarker(taskId: number): string {
  return `<!-- ratatoskr:answer task=${taskId} -->`;
}

async function settle(deps: IntakeDeps, task: Task, event: TaskEvent, patch: TaskPatch) {
  try {
    await deps.transition(task.id, event, { patch });
    return { status: event.type };
  } catch (err) {
    if (err instanceof IllegalTransitionError) return skipped(`task ${task.id} moved on: ${err.message}`);
    throw err;
  }
}

async function openPull(deps: IntakeDeps, task: Task): Promise<PullRequest> {
  const where = { owner: task.repoOwner ?? "", repo: task.repoName ?? "" };
  const branch = task.branch ?? "";
  const find = async () => (await deps.gitea.listPullRequests(where, "open")).find((p) => p.head?.ref === branch);
  // A retried job whose first try created the PR but lost the answer finds it here.
  const existing = await find();
  if (existing) return existing;
  const base = (await deps.gitea.getRepo(where)).default_branch ?? "main";
  const body = pullRequestBody(task, await deps.repos.events.list(task.id));
  try {
    return await deps.gitea.createPullRequest(where, { head: branch, base, title: task.title ?? branch, body });
  } catch (err) {
    const again = err instanceof GiteaApiError && err.status === 409 ? await find() : undefined;
    if (again) return again;
    throw err;
  }
}

async function postAnswer(deps: IntakeDeps, task: Task): Promise<string> {
  const where = { owner: task.repoOwner ?? "", repo: task.repoName ?? "" };
  const number = task.targetNumber ?? 0;
  const marker = answerMarker(task.id);
  const posted = (await deps.gitea.listIssueComments(where, number)).find((c) => (c.body ?? "").includes(marker));
  if (posted) return posted.html_url ?? "";
  const events = await deps.repos.events.list(task.id);
  const discuss = task.commandKind === "discuss";
  const text = discuss
    ? latest(events, "answer.drafted", z.object({ answer: z.string() }))?.answer
    : latest(events, "plan.drafted", z.object({ plan: z.string() }))?.plan;
  const rounds = discuss ? "" : `, reviewed in ${task.round} round${task.round === 1 ? "" : "s"}`;
  const heading = `### ${discuss ? "Answer" : "Plan"} (\`/agent ${task.commandKind}\` by @${task.requesterLogin}, command #${task.id}${rounds})`;
  const body = [marker, heading, "", text ?? "(empty)"].join("\n");
  return (await deps.gitea.createComment(where, number, body)).html_url ?? "";
}

/**
 * The `publish` intake job (G3): the command's agents are done; open the implement PR ("Closes
 * #N", summary, checks, minor findings) or post the plan/answer as a comment, then settle the
 * command. Both steps look before they create, so a retried job never makes a second one.
 */
export async function publishCommand(deps: IntakeDeps, taskId: number) {
  const task = await deps.repos.tasks.findById(taskId);
  if (!task) return skipped(`task ${taskId} does not exist`);
  if (task.status !== "running") return skipped(`task ${taskId} is ${task.status}`);
  if (task.targetType === "pr") {
    const report = latest(await deps.repos.events.list(task.id), "dev.finished", devFinishedWithCommit);
    return settle(deps, task, { type: "run.succeeded" }, {
      resultText: `Pushed ${report?.commit ?? "the revision"} to \`${task.branch}\`, reviewed: ${report?.summary ?? ""}`.trim(),
    });
  }
  if (task.commandKind === "implement") {
    const pull = await openPull(deps, task);
    deps.logger.info({ taskId, pull: pull.html_url }, "agent PR opened");
    return settle(deps, task, { type: "run.succeeded" }, {
      prUrl: pull.html_url ?? null,
      resultText: `Opened ${pull.html_url ?? `PR !${pull.number}`} from \`${task.branch}\` (head ${(pull.head?.sha ?? "").slice(0, 7)}).`,
    });
  }
  if (task.commandKind === "plan" || task.commandKind === "discuss" || task.commandKind === "iterate") {
    const url = await postAnswer(deps, task);
    const what = task.commandKind === "discuss" ? "Answer" : "Plan";
    return settle(deps, task, { type: "run.succeeded" }, { resultText: `${what} posted: ${url}` });
  }
  return skipped(`task ${taskId}: /agent ${task.commandKind} publishes nothing`);
}

/** The publish job gave up (Gitea unreachable, or refused the PR/comment): the command fails with why. */
export async function failPublish(deps: IntakeDeps, taskId: number, err: unknown): Promise<void> {
  const why = err instanceof Error ? err.message : String(err);
  await deps
    .transition(taskId, { type: "run.failed", reason: `the work is done and pushed, but publishing it failed: ${why}` })
    .catch((failure: unknown) => {
      if (!(failure instanceof IllegalTransitionError)) throw failure;
    });
}
