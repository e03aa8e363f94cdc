import { access, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { GitCommandError, PushRejectedError, RepoNotFoundError } from "./errors/git-workspace.error.ts";
import type { GitFailureContext } from "./git-failure.ts";
import type { GitLogger } from "./git-logger.ts";
import { createGitRunner, type GitRunner } from "./git-runner.ts";
import type { GitAuthor } from "./git-env.ts";
import { keyedLock } from "./keyed-lock.ts";
import { validateRepoName, type RepoRef } from "./repo-name.ts";
import { describeRemote, remoteUrl, type RemoteSpec } from "./remote-spec.ts";
import { ioError, isErrno, readMeta, workspaceLayout, writeFileAtomic, type WorkspaceMeta } from "./workspace-layout.ts";
import { listUnfinishedTasks, sweepWorkspaces, type SweepResult } from "./workspace-sweep.ts";
import { assertBranchName } from "./ref-name.ts";
import { NO_PUSH_REMOTE, restoreGitDir, saveGitConfig } from "./git-dir-guard.ts";
import { parseLsRemote, type RemoteRefs } from "./remote-refs.ts";
import { taskDirTagger } from "./task-dir-key.ts";
import { pathScrubber, scrubbed } from "./path-scrub.ts";

/** One task's working tree of one repository. */
export interface Workspace {
  readonly taskId: number;
  readonly repo: RepoRef;
  /** Absolute path of the working tree (what the dev agent edits). */
  readonly dir: string;
  /** The task branch, e.g. `ratatoskr/42-fix-the-greeting`. */
  readonly branch: string;
  /** The branch the task branch was created from (default branch or the PR base). */
  readonly baseBranch: string;
  /** The commit the task branch started from; diffs are taken against it. */
  readonly baseSha: string;
}

export interface PrepareInput {
  readonly taskId: number;
  /** `owner/name` (validated here) or an already validated ref. */
  readonly repo: string | RepoRef;
  /**
   * The task branch (see `branchName`). When the remote already has it (a PR head, or a branch
   * pushed in an earlier life of this task) it is checked out from there; otherwise it is created.
   */
  readonly branch: string;
  /** Start from this branch instead of the remote's default branch. */
  readonly baseBranch?: string;
}

export interface PushResult {
  readonly branch: string;
  readonly sha: string;
  /** True when the remote already had exactly this commit (a repeated push is a no-op). */
  readonly alreadyPushed: boolean;
}

export interface GitWorkspacesOptions {
  /** `WORKSPACE_DIR`: everything this package writes lives under it. */
  readonly root: string;
  readonly remote: RemoteSpec;
  readonly logger: GitLogger;
  /** How long a finished task's workspaces are kept, in ms. */
  readonly retentionMs: number;
  /** Commit author and committer; default `Ratatoskr <ratatoskr@localhost>`. */
  readonly author?: GitAuthor;
  /** Kill a git command that printed nothing for this long, in ms (default 120_000). */
  readonly commandTimeoutMs?: number;
  /** Clock for markFinished/sweep, in ms since the epoch (tests). */
  readonly now?: () => number;
}

export interface GitWorkspaces {
  /**
   * Clones (first round) or fetches (later rounds) the repository into the task's own working
   * tree and checks out the task branch. Throws `InvalidRepoNameError`, `RepoNotFoundError`,
   * `GitHostUnreachableError`, `GitAuthError`, `WorkspaceIoError`.
   */
  prepare(input: PrepareInput): Promise<Workspace>;
  /** Directory holding all of a task's working trees (`<root>/tasks/<taskId>`). */
  taskDir(taskId: number): string;
  /** Whole-branch diff of the committed work against the base commit. */
  diff(ws: Workspace): Promise<string>;
  /** Diffs of several workspaces, each headed by `### owner/name (branch)`. */
  diffAll(wss: readonly Workspace[]): Promise<string>;
  /** Files changed since the base commit: committed, staged, modified and untracked. */
  changedFiles(ws: Workspace): Promise<string[]>;
  /**
   * Stages everything and commits; the new sha, or `null` when the working tree had nothing to
   * commit. Commits the agent made by itself are not counted here: compare {@link headSha}.
   */
  commitAll(ws: Workspace, message: string): Promise<string | null>;
  /** The sha of the branch tip in the working tree. */
  headSha(ws: Workspace): Promise<string>;
  /** Full messages of the commits on the branch since the base commit, newest first. */
  branchMessages(ws: Workspace): Promise<string[]>;
  /**
   * Pushes the task branch without force. Throws `PushRejectedError` when the remote branch
   * moved; never retried with force. Pushing an already pushed commit is a no-op.
   */
  push(ws: Workspace): Promise<PushResult>;
  /**
   * Makes the working tree exactly the pushed branch (after `prepare` fetched it): commits and
   * edits that never reached the remote are dropped, commits others pushed are taken. No-op while
   * the remote has no such branch.
   */
  syncToRemote(ws: Workspace): Promise<void>;
  /** Every ref of the tree's repository on the remote (`git ls-remote`), to see what a run moved. */
  remoteRefs(ws: Workspace): Promise<RemoteRefs>;
  /**
   * What the working tree holds beyond the branch tip: HEAD and every changed, untracked or
   * ignored file. Equal before and after a run means the run changed nothing there.
   */
  treeState(ws: Workspace): Promise<string>;
  /** Marks the task finished: its workspaces are removed by {@link sweep} after retention. */
  markFinished(taskId: number): Promise<void>;
  /** Takes the mark back (the task moved on after it was marked); the next prepare does too. */
  clearFinished(taskId: number): Promise<void>;
  /** Tasks with working trees here not marked finished, in id order. */
  unfinishedTaskIds(): Promise<number[]>;
  /** Removes finished workspaces older than retention; failures throw `WorkspaceIoError`. */
  sweep(): Promise<SweepResult>;
}

const DEFAULT_AUTHOR: GitAuthor = { name: "Ratatoskr", email: "ratatoskr@localhost" };

export function createGitWorkspaces(options: GitWorkspacesOptions): GitWorkspaces {
  const { remote, logger } = options;
  const layout = workspaceLayout(options.root, taskDirTagger(path.join(path.resolve(options.root), "state")));
  const git: GitRunner = createGitRunner({
    remote,
    author: options.author ?? DEFAULT_AUTHOR,
    timeoutMs: options.commandTimeoutMs ?? 120_000,
    onCommand: ({ op, repo }, ms) => logger.debug({ op, repo, ms }, "git command"),
  });
  const now = options.now ?? Date.now;
  const lock = keyedLock();
  const busy = new Map<number, number>();
  const baseUrl = remote.kind === "http" ? remote.baseUrl : undefined;
  // Messages reach people: the host as they know it, never the server's directories.
  const where = remote.kind === "local" ? "the local git host" : describeRemote(remote);
  const scrub = pathScrubber(remote, options.root);
  const ctx = (op: string, repo: RepoRef): GitFailureContext => ({ op, repo: repo.fullName, where });
  const rev = async (dir: string, ref: string, repo: RepoRef) => (await git.run(dir, ["rev-parse", "--verify", `${ref}^{commit}`], { ctx: ctx("rev-parse", repo) })).trim();

  /** Before the service runs git in a tree the agent worked in (git-dir-guard.ts). */
  const guard = (ws: Pick<Workspace, "taskId" | "repo" | "dir">) =>
    restoreGitDir({ dir: ws.dir, tasksRoot: layout.tasksRoot, copy: layout.gitConfigCopy(ws.taskId, ws.repo) });

  async function hasRef(dir: string, ref: string, repo: RepoRef): Promise<boolean> {
    const out = await git.run(dir, ["for-each-ref", "--format=%(refname)", ref], { ctx: ctx("for-each-ref", repo) });
    return out.trim() === ref;
  }

  async function fetch(dir: string, repo: RepoRef): Promise<void> {
    // An explicit URL, not "origin": the agent can edit .git/config, we do not read it for where to send credentials.
    await git.run(dir, ["fetch", "--prune", "--no-tags", remoteUrl(remote, repo), "+refs/heads/*:refs/remotes/origin/*"], { withCredentials: true, ctx: ctx("fetch", repo) });
  }

  async function clone(taskId: number, repo: RepoRef, dir: string): Promise<void> {
    const url = remoteUrl(remote, repo);
    if (remote.kind === "local" && !(await exists(url))) {
      throw new RepoNotFoundError(`repository ${repo.fullName} was not found on ${where}`);
    }
    try {
      await rm(dir, { recursive: true, force: true }); // leftovers of a clone that died half-way
      await mkdir(path.dirname(dir), { recursive: true });
    } catch (error) {
      throw ioError(`cannot create ${dir}`, error);
    }
    const started = Date.now();
    await git.run(path.dirname(dir), ["clone", "--no-checkout", "--no-tags", "--", url, repo.name], { withCredentials: true, ctx: ctx("clone", repo) });
    logger.info({ taskId, repo: repo.fullName, ms: Date.now() - started }, "repository cloned");
  }

  async function defaultBranch(dir: string, repo: RepoRef): Promise<string> {
    try {
      const head = (await git.run(dir, ["symbolic-ref", "--short", "refs/remotes/origin/HEAD"], { ctx: ctx("default-branch", repo) })).trim();
      return head.replace(/^origin\//, "");
    } catch {
      throw new GitCommandError(`repository ${repo.fullName} has no default branch (is it empty?)`);
    }
  }

  async function createTree(input: PrepareInput, repo: RepoRef, dir: string): Promise<WorkspaceMeta> {
    await clone(input.taskId, repo, dir);
    const baseBranch = input.baseBranch ?? (await defaultBranch(dir, repo));
    assertBranchName(baseBranch);
    if (!(await hasRef(dir, `refs/remotes/origin/${baseBranch}`, repo))) {
      throw new RepoNotFoundError(`branch ${baseBranch} was not found in ${repo.fullName} on ${where}`);
    }
    const existing = await hasRef(dir, `refs/remotes/origin/${input.branch}`, repo);
    const start = existing ? `origin/${input.branch}` : `origin/${baseBranch}`;
    await git.run(dir, ["checkout", "-q", "--no-track", "-b", input.branch, start], { ctx: ctx("checkout", repo) });
    const baseSha = existing ? await mergeBase(dir, repo, baseBranch, input.branch) : await rev(dir, "HEAD", repo);
    await git.run(dir, ["remote", "set-url", "origin", NO_PUSH_REMOTE], { ctx: ctx("remote", repo) });
    await git.run(dir, ["remote", "set-url", "--push", "origin", NO_PUSH_REMOTE], { ctx: ctx("remote", repo) });
    await saveGitConfig(dir, layout.gitConfigCopy(input.taskId, repo));
    return { branch: input.branch, baseBranch, baseSha };
  }

  async function mergeBase(dir: string, repo: RepoRef, baseBranch: string, branch: string): Promise<string> {
    const noHistory = () => new GitCommandError(`branch ${branch} of ${repo.fullName} shares no history with ${baseBranch}`);
    // git exits 1 without a word when there is no common commit.
    const sha = (
      await git.run(dir, ["merge-base", `origin/${baseBranch}`, "HEAD"], {
        ctx: ctx("merge-base", repo),
        onFailure: (output) => (/^\(git exited with 1\)$/.test(output.trim()) ? noHistory() : undefined),
      })
    ).trim();
    if (!/^[0-9a-f]{40,64}$/.test(sha)) throw noHistory();
    return sha;
  }

  async function reuseTree(taskId: number, repo: RepoRef, dir: string, meta: WorkspaceMeta): Promise<void> {
    await guard({ taskId, repo, dir });
    await fetch(dir, repo);
    const current = (await git.run(dir, ["rev-parse", "--abbrev-ref", "HEAD"], { ctx: ctx("rev-parse", repo) })).trim();
    if (current !== meta.branch) await git.run(dir, ["checkout", "-q", meta.branch], { ctx: ctx("checkout", repo) });
    await catchUp(taskId, repo, dir, meta.branch);
    logger.debug({ taskId, repo: repo.fullName, branch: meta.branch }, "workspace reused");
  }

  /**
   * Another process's clone (the reviewer's, another dev replica's) may have pushed the task
   * branch since this tree last saw it: fast-forward to the remote head, never past local work.
   */
  async function catchUp(taskId: number, repo: RepoRef, dir: string, branch: string): Promise<void> {
    const remoteRef = `refs/remotes/origin/${branch}`;
    if (!(await hasRef(dir, remoteRef, repo))) return;
    const count = async (range: string) => Number((await git.run(dir, ["rev-list", "--count", range], { ctx: ctx("rev-list", repo) })).trim());
    if ((await count(`${remoteRef}..HEAD`)) > 0 || (await count(`HEAD..${remoteRef}`)) === 0) return;
    await git.run(dir, ["merge", "--ff-only", "-q", remoteRef], { ctx: ctx("merge", repo) }).catch((err: unknown) => {
      logger.warn({ taskId, repo: repo.fullName, branch, err }, "could not fast-forward the workspace to the pushed branch");
    });
  }

  async function prepare(input: PrepareInput): Promise<Workspace> {
    const repo = validateRepoName(typeof input.repo === "string" ? input.repo : input.repo.fullName, { baseUrl });
    assertBranchName(input.branch);
    const dir = layout.repoDir(input.taskId, repo);
    const metaFile = layout.metaFile(input.taskId, repo);
    busy.set(input.taskId, (busy.get(input.taskId) ?? 0) + 1);
    try {
      return await lock(dir, async () => {
        await rm(layout.finishedFile(input.taskId), { force: true }).catch((error: unknown) => {
          throw ioError("cannot clear the finished mark", error);
        });
        let meta = await readMeta(metaFile);
        // A tree without the saved config (made before it was kept) is cloned again, not trusted.
        if (meta && (await exists(path.join(dir, ".git"))) && (await exists(layout.gitConfigCopy(input.taskId, repo)))) {
          if (meta.branch !== input.branch) logger.warn({ taskId: input.taskId, kept: meta.branch, asked: input.branch }, "workspace keeps its original branch");
          await reuseTree(input.taskId, repo, dir, meta);
        } else {
          meta = await createTree(input, repo, dir);
          await writeFileAtomic(metaFile, JSON.stringify(meta));
        }
        return { taskId: input.taskId, repo, dir, ...meta };
      });
    } finally {
      const left = (busy.get(input.taskId) ?? 1) - 1;
      if (left > 0) busy.set(input.taskId, left);
      else busy.delete(input.taskId);
    }
  }

  async function diff(ws: Workspace): Promise<string> {
    await guard(ws);
    return git.run(ws.dir, ["diff", "--no-ext-diff", "--no-textconv", "--no-color", ws.baseSha, "HEAD", "--"], { ctx: ctx("diff", ws.repo) });
  }

  async function changedFiles(ws: Workspace): Promise<string[]> {
    await guard(ws);
    const tracked = await git.run(ws.dir, ["diff", "--no-ext-diff", "--name-only", ws.baseSha, "--"], { ctx: ctx("diff", ws.repo) });
    const untracked = await git.run(ws.dir, ["ls-files", "--others", "--exclude-standard"], { ctx: ctx("ls-files", ws.repo) });
    return [...new Set(`${tracked}\n${untracked}`.split("\n").filter(Boolean))].sort();
  }

  async function commitAll(ws: Workspace, message: string): Promise<string | null> {
    return lock(ws.dir, async () => {
      await guard(ws);
      await git.run(ws.dir, ["add", "-A"], { ctx: ctx("commit", ws.repo) });
      const staged = await git.run(ws.dir, ["diff", "--cached", "--name-only"], { ctx: ctx("commit", ws.repo) });
      if (staged.trim() === "") return null;
      await git.run(ws.dir, ["commit", "-q", "--no-verify", "-m", message], { ctx: ctx("commit", ws.repo) });
      const sha = await rev(ws.dir, "HEAD", ws.repo);
      logger.info({ taskId: ws.taskId, repo: ws.repo.fullName, branch: ws.branch, sha }, "work committed");
      return sha;
    });
  }

  async function push(ws: Workspace): Promise<PushResult> {
    return lock(ws.dir, async () => {
      await guard(ws);
      const sha = await rev(ws.dir, "HEAD", ws.repo);
      // Only the task branch, by explicit refspec to the configured URL, never forced.
      const output = await git.run(ws.dir, ["push", "--porcelain", "--no-verify", remoteUrl(remote, ws.repo), `HEAD:refs/heads/${ws.branch}`], {
        withCredentials: true,
        ctx: ctx("push", ws.repo),
        onFailure: (out) => {
          const rejected = /\[rejected\]\s*(.*)/.exec(out);
          return rejected ? new PushRejectedError(ws.branch, ws.repo.fullName, rejected[1]?.replace(/[()]/g, "").trim() || "non-fast-forward") : undefined;
        },
      });
      const alreadyPushed = /\[up to date\]/.test(output);
      logger.info({ taskId: ws.taskId, repo: ws.repo.fullName, branch: ws.branch, sha, alreadyPushed }, "branch pushed");
      return { branch: ws.branch, sha, alreadyPushed };
    });
  }

  const api: GitWorkspaces = {
    prepare,
    taskDir: (taskId) => layout.taskDir(taskId),
    diff,
    async diffAll(wss) {
      const parts: string[] = [];
      for (const ws of wss) {
        const text = await diff(ws);
        parts.push(`### ${ws.repo.fullName} (${ws.branch})\n${text.trim() === "" ? "(no changes)\n" : text}`);
      }
      return parts.join("\n");
    },
    changedFiles,
    commitAll,
    headSha: async (ws) => {
      await guard(ws);
      return rev(ws.dir, "HEAD", ws.repo);
    },
    async branchMessages(ws) {
      await guard(ws);
      const out = await git.run(ws.dir, ["log", "--format=%B%x00", `${ws.baseSha}..HEAD`, "--"], { ctx: ctx("log", ws.repo) });
      return out.split("\0").map((m) => m.trim()).filter(Boolean);
    },
    push,
    syncToRemote: (ws) =>
      lock(ws.dir, async () => {
        await guard(ws);
        const remoteRef = `refs/remotes/origin/${ws.branch}`;
        if (!(await hasRef(ws.dir, remoteRef, ws.repo))) return;
        await git.run(ws.dir, ["reset", "-q", "--hard", remoteRef], { ctx: ctx("reset", ws.repo) });
        await git.run(ws.dir, ["clean", "-q", "-fd"], { ctx: ctx("clean", ws.repo) });
      }),
    async remoteRefs(ws) {
      const out = await git.run(path.resolve(options.root), ["ls-remote", "--", remoteUrl(remote, ws.repo)], { withCredentials: true, ctx: ctx("ls-remote", ws.repo) });
      return parseLsRemote(out);
    },
    async treeState(ws) {
      await guard(ws);
      const head = await rev(ws.dir, "HEAD", ws.repo);
      const status = await git.run(ws.dir, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching"], { ctx: ctx("status", ws.repo) });
      return `${head}\n${status}`;
    },
    async markFinished(taskId) {
      await writeFileAtomic(layout.finishedFile(taskId), new Date(now()).toISOString());
    },
    async clearFinished(taskId) {
      await rm(layout.finishedFile(taskId), { force: true }).catch((error: unknown) => {
        throw ioError("cannot clear the finished mark", error);
      });
    },
    unfinishedTaskIds: () => listUnfinishedTasks({ layout, isBusy: (id) => busy.has(id) }),
    sweep: () => sweepWorkspaces({ layout, retentionMs: options.retentionMs, now: now(), logger, isBusy: (id) => busy.has(id) }),
  };
  return scrubbedMethods(api, scrub);
}

/** Every method that returns a promise has its errors' messages scrubbed of local paths. */
function scrubbedMethods(api: GitWorkspaces, scrub: (text: string) => string): GitWorkspaces {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(api)) {
    out[name] = typeof value === "function" && name !== "taskDir"
      ? (...args: unknown[]) => scrubbed(scrub, () => (value as (...a: unknown[]) => Promise<unknown>)(...args))
      : value;
  }
  return out as unknown as GitWorkspaces;
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR")) return false;
    throw ioError(`cannot read ${p}`, error);
  }
}
