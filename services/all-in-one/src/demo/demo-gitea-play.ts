import { isFinal, type TaskStatus } from "@ratatoskr/contracts";
import type { Repositories } from "@ratatoskr/db";
import type { FakeGitea } from "@ratatoskr/testkit";
import { stamp } from "./demo-conversation.ts";
import { DEMO_ISSUE } from "./demo-gitea-script.ts";
import { demoStyle, type DemoStyle } from "./demo-style.ts";

/** A plan, two dev rounds and three reviews against the scripted model: well under a minute; generous for a slow machine. */
const COMMAND_TIMEOUT_MS = 240_000;
const POLL_MS = 100;
const INDENT = "\n            ";

export interface GiteaDemoPlay {
  gitea: FakeGitea;
  repo: string;
  person: string;
  tasks: Pick<Repositories["tasks"], "findById">;
  /** Finds the command a comment became (ingress stores it with the comment's id). */
  commandOf(commentId: number): Promise<number | undefined>;
  print: (line: string) => void;
  startedAt?: number;
  style?: DemoStyle;
  signal?: AbortSignal;
}

export interface GiteaDemoOutcome {
  issue: number;
  /** The `/agent implement` command. */
  taskId: number;
  succeeded: boolean;
  prUrl: string | null;
  branch: string | null;
}

/** How a status comment shows that its command stopped (see the notifier's status-comment renderer). */
const ENDED_HEADLINES = ["✅ done", "❌ failed", "⏱️ timed out", "🚫 rejected", "⏹️ cancelled", "⏸️ paused"];

/** The command stopped (or waits on its budget), and its status comment says so: what the person waits for. */
function hasEnded(gitea: FakeGitea, repo: string, issue: number, task: { id: number; status: string }): boolean {
  if (!isFinal(task.status as TaskStatus) && task.status !== "paused") return false;
  const status = gitea.commentsOf(repo, issue).find((c) => (c.body ?? "").includes(`ratatoskr:status task=${task.id} `));
  return ENDED_HEADLINES.some((headline) => (status?.body ?? "").includes(headline));
}

/** Markdown as a terminal reader wants it: no hidden marker, no bold stars. */
function plain(body: string): string {
  return body
    .replace(/<!--[\s\S]*?-->\n?/g, "")
    .replaceAll("**", "")
    .trim();
}

/**
 * Prints what a person watching the issue sees: each new comment, each edit of a comment (the
 * status comments are edited as their commands move on) and each PR opened for it.
 */
class IssueWatcher {
  private readonly seen = new Map<number, string>();
  private readonly pulls = new Set<number>();

  constructor(private readonly play: GiteaDemoPlay & { style: DemoStyle; at: () => string }, private readonly issue: number) {}

  poll(): void {
    const { gitea, repo, style, print, at } = this.play;
    for (const comment of gitea.commentsOf(repo, this.issue)) {
      const id = comment.id ?? 0;
      const body = comment.body ?? "";
      const before = this.seen.get(id);
      if (before === body) continue;
      this.seen.set(id, body);
      const who = comment.user?.login ?? "?";
      if (who === this.play.person) continue; // said() printed it already
      const what = before === undefined ? "commented" : "edited a comment";
      print(`\n${at()} ${style.bot(`🤖 ${who} ${what}:${INDENT}${plain(body).replaceAll("\n", INDENT)}`)}`);
    }
    const repository = gitea.repos.find(...(repo.split("/") as [string, string]));
    for (const pull of repository ? gitea.issues.pulls(repository) : []) {
      if (this.pulls.has(pull.number ?? 0) || !(pull.body ?? "").includes(`#${this.issue}`)) continue;
      this.pulls.add(pull.number ?? 0);
      const head = `🔀 PR !${pull.number} opened: ${pull.title ?? ""} (${pull.head?.ref ?? "?"} → ${pull.base?.ref ?? "?"})`;
      print(`\n${at()} ${style.bot(`${head}${INDENT}${plain(pull.body ?? "").replaceAll("\n", INDENT)}`)}`);
    }
  }
}

/**
 * Plays a person on the fake Gitea: opens an issue, comments `/agent plan`, then `/agent
 * implement` once the plan is posted and its status comment says done; prints every comment and
 * edit as it happens, each with its time, until the implement command ends (its PR opened, or why
 * it stopped).
 */
export async function playGiteaDemo(options: GiteaDemoPlay): Promise<GiteaDemoOutcome> {
  const style = options.style ?? demoStyle(false);
  const startedAt = options.startedAt ?? Date.now();
  const at = () => style.dim(stamp(startedAt));
  const { gitea, repo, person, print } = options;
  const issue = gitea.addIssue(repo, DEMO_ISSUE.title, DEMO_ISSUE.body, person).number ?? 0;
  print(`\n${at()} ${style.person(`👤 ${person} opened issue #${issue}: ${DEMO_ISSUE.title}${INDENT}${DEMO_ISSUE.body}`)}`);
  const watcher = new IssueWatcher({ ...options, style, at }, issue);

  const command = async (body: string): Promise<{ id: number; status: TaskStatus }> => {
    print(`\n${at()} ${style.person(`👤 ${person} commented: ${body}`)}`);
    const { comment } = await gitea.comment(repo, issue, person, body);
    const deadline = Date.now() + COMMAND_TIMEOUT_MS;
    let id: number | undefined;
    for (;;) {
      watcher.poll();
      id ??= await options.commandOf(comment.id ?? 0);
      const task = id === undefined ? null : await options.tasks.findById(id);
      if (task && hasEnded(gitea, repo, issue, task)) {
        watcher.poll();
        return { id: task.id, status: task.status as TaskStatus };
      }
      if (Date.now() > deadline) throw new Error(`\`${body}\` did not finish within ${COMMAND_TIMEOUT_MS / 1000} s`);
      if (options.signal?.aborted) throw new Error("stopped");
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };

  const plan = await command("/agent plan");
  if (plan.status !== "success") return { issue, taskId: plan.id, succeeded: false, prUrl: null, branch: null };
  const implement = await command("/agent implement");
  const task = await options.tasks.findById(implement.id);
  return {
    issue,
    taskId: implement.id,
    succeeded: implement.status === "success",
    prUrl: task?.prUrl ?? null,
    branch: task?.branch ?? null,
  };
}
