import type { Task, TaskPatch } from "@ratatoskr/db";
import { visibleText, type PullRequest } from "@ratatoskr/gitea";
import type { IntakeDeps } from "./intake-deps.ts";

/** What an authorized work command needs before it queues, or why it may not run (G3). */
export type PreparedWork = { ok: true; patch: TaskPatch } | { ok: false; reason: string };

/** The branch `/agent implement` pushes: one per command, so a refused PR never blocks the next. */
export function implementBranch(issueNumber: number, taskId: number): string {
  return `agent/issue-${issueNumber}-${taskId}`;
}

/** `agent/issue-<N>-<taskId>` → the implement command that opened the PR, else undefined. */
export function implementTaskOfBranch(branch: string | undefined): number | undefined {
  const match = /^agent\/issue-\d+-(\d+)$/.exec(branch ?? "");
  return match ? Number(match[1]) : undefined;
}

/** An agent PR of the issue that is open or merged: `/agent implement` is refused while one exists. */
export function blockingAgentPull(pulls: readonly PullRequest[], issueNumber: number): PullRequest | undefined {
  const prefix = `agent/issue-${issueNumber}-`;
  return pulls.find((p) => (p.head?.ref ?? "").startsWith(prefix) && (p.state === "open" || p.merged === true));
}

export function agentPullRefusal(blocking: PullRequest): string {
  return `an agent PR for this issue is already ${blocking.merged ? "merged" : "open"}: ${blocking.html_url ?? `!${blocking.number}`}. Use \`/agent iterate\` or \`/agent fix\` on it.`;
}

/**
 * Reads what the agents will work on from Gitea, as a reader sees it (hidden HTML comments and
 * invisible characters stripped, G2), and decides the branch. Title and body go to the task's
 * `title`/`goal`; the repository to `repos`.
 */
export async function prepareWork(deps: IntakeDeps, task: Task): Promise<PreparedWork> {
  const where = { owner: task.repoOwner ?? "", repo: task.repoName ?? "" };
  const number = task.targetNumber ?? 0;
  const repos = [`${where.owner}/${where.repo}`];
  if (task.targetType === "pr") {
    const pull = await deps.gitea.getPullRequest(where, number);
    const head = pull.head?.ref ?? "";
    if (pull.state !== "open") return { ok: false, reason: `PR !${number} is ${pull.merged ? "merged" : "closed"}; commands run on open PRs only` };
    if (pull.head?.repo?.full_name && pull.head.repo.full_name.toLowerCase() !== repos[0]!.toLowerCase())
      return { ok: false, reason: `PR !${number} comes from the fork ${pull.head.repo.full_name}; the bot pushes only to ${repos[0]}` };
    if (task.commandKind === "iterate" && implementTaskOfBranch(head) === undefined)
      return {
        ok: false,
        reason: `\`/agent iterate\` continues an agent's own PR (branch \`agent/issue-<N>-<id>\`); this PR's branch is \`${head}\`. Use \`/agent fix\` instead.`,
      };
    return {
      ok: true,
      patch: { title: visibleText(pull.title ?? ""), goal: visibleText(pull.body ?? ""), repos, branch: head },
    };
  }
  const issue = await deps.gitea.getIssue(where, number);
  const patch: TaskPatch = { title: visibleText(issue.title ?? ""), goal: visibleText(issue.body ?? ""), repos };
  if (task.commandKind !== "implement") return { ok: true, patch };
  const blocking = blockingAgentPull(await deps.gitea.listPullRequests(where, "all"), number);
  if (blocking) return { ok: false, reason: agentPullRefusal(blocking) };
  return { ok: true, patch: { ...patch, branch: implementBranch(number, task.id) } };
}
