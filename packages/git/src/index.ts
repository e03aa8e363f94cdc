/**
 * @ratatoskr/git — task workspaces on real git: clone once per task and repository, a task
 * branch, whole-branch diffs, commit, push without force, retention sweep.
 *
 * Credentials reach git only through the environment of each git child process
 * (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` → `http.<baseUrl>.extraHeader`),
 * never in a URL, argv, log line or `.git/config`.
 *
 * API draft: signatures are final, bodies land next.
 */

/** Where the repositories live. */
export type RemoteSpec =
  /** Bare repositories at `<root>/<owner>/<name>.git` (demo, tests). */
  | { readonly kind: "local"; readonly root: string }
  /** A smart-HTTP git host such as Gitea: `<baseUrl>/<owner>/<name>.git`, basic auth with a token. */
  | { readonly kind: "http"; readonly baseUrl: string; readonly username: string; readonly token: string };

/** A validated repository name on the configured host. */
export interface RepoRef {
  readonly owner: string;
  readonly name: string;
  /** `owner/name`. */
  readonly fullName: string;
}

/** One task's working tree of one repository. */
export interface Workspace {
  readonly taskId: number;
  readonly repo: RepoRef;
  /** Absolute path of the working tree (what the dev agent edits). */
  readonly dir: string;
  /** The task branch, e.g. `ratatoskr/42-fix-the-greeting`. */
  readonly branch: string;
  /** The branch the task branch was created from (default branch or the PR head). */
  readonly baseBranch: string;
  /** The commit the task branch started from; diffs are taken against it. */
  readonly baseSha: string;
}

export interface PrepareInput {
  readonly taskId: number;
  /** `owner/name`, validated again here. */
  readonly repo: string | RepoRef;
  /** The task branch to create or reuse (see {@link branchName}). */
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

export interface SweepResult {
  /** Task ids whose workspaces were removed. */
  readonly removed: number[];
}

/** The slice of a pino logger this package uses (structured object first, message second). */
export interface GitLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export interface GitWorkspacesOptions {
  /** `WORKSPACE_DIR`: everything this package writes lives under it. */
  readonly root: string;
  readonly remote: RemoteSpec;
  readonly logger: GitLogger;
  /** How long a finished task's workspaces are kept, in ms. */
  readonly retentionMs: number;
  /** Commit author/committer; default `Ratatoskr <ratatoskr@localhost>`. */
  readonly author?: { readonly name: string; readonly email: string };
  /** Kill a git command that runs longer than this, in ms (default 120_000). */
  readonly commandTimeoutMs?: number;
  /** Clock for the sweep (tests). */
  readonly now?: () => number;
}

export interface GitWorkspaces {
  /**
   * Clones (first round) or fetches (later rounds) the repository into the task's own working
   * tree and checks out the task branch, created from `baseBranch` or the default branch.
   * Throws {@link RepoNotFoundError}, {@link GitHostUnreachableError}, {@link GitAuthError},
   * {@link WorkspaceIoError}.
   */
  prepare(input: PrepareInput): Promise<Workspace>;
  /** Directory holding all of a task's working trees (`<root>/tasks/<taskId>`). */
  taskDir(taskId: number): string;
  /** Whole-branch diff (committed) of the workspace against its base commit. */
  diff(ws: Workspace): Promise<string>;
  /** Diffs of several workspaces, each headed by `### owner/name (branch)`. */
  diffAll(wss: readonly Workspace[]): Promise<string>;
  /** Files changed on the branch since its base, plus uncommitted ones. */
  changedFiles(ws: Workspace): Promise<string[]>;
  /** Stages everything and commits; returns the new sha, or `null` when nothing changed. */
  commitAll(ws: Workspace, message: string): Promise<string | null>;
  /**
   * Pushes the task branch without force. Throws {@link PushRejectedError} when the remote
   * branch moved; never retried with force. Pushing an already pushed commit is a no-op.
   */
  push(ws: Workspace): Promise<PushResult>;
  /** Marks the task finished: its workspaces become eligible for the sweep after retention. */
  markFinished(taskId: number): Promise<void>;
  /** Removes finished workspaces older than retention; throws {@link WorkspaceIoError}. */
  sweep(): Promise<SweepResult>;
}

/** Base class of every error this package throws. `code` is stable for callers. */
export class GitWorkspaceError extends Error {
  constructor(
    readonly code: "invalid-repo-name" | "repo-not-found" | "host-unreachable" | "auth-failed" | "push-rejected" | "workspace-io" | "git-failed",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
export class InvalidRepoNameError extends GitWorkspaceError {}
export class RepoNotFoundError extends GitWorkspaceError {}
export class GitHostUnreachableError extends GitWorkspaceError {}
export class GitAuthError extends GitWorkspaceError {}
export class PushRejectedError extends GitWorkspaceError {}
export class WorkspaceIoError extends GitWorkspaceError {}
export class GitCommandError extends GitWorkspaceError {}

/**
 * Validates a repository name given by a person: `owner/name` (or a URL on `baseUrl`'s host).
 * No `..`, no absolute paths, no other hosts. Throws {@link InvalidRepoNameError}.
 */
export function validateRepoName(input: string, options?: { baseUrl?: string }): RepoRef {
  void input;
  void options;
  throw new Error("not yet");
}

/** `ratatoskr/<taskId>-<slug>`; the slug is ASCII (Cyrillic transliterated), at most 40 chars. */
export function branchName(taskId: number, title: string): string {
  void taskId;
  void title;
  throw new Error("not yet");
}

/** Commit message from the task title and round: `ratatoskr #42 round 2: <title>`. */
export function commitMessage(input: { taskId: number; title: string; round: number }): string {
  void input;
  throw new Error("not yet");
}

export function createGitWorkspaces(options: GitWorkspacesOptions): GitWorkspaces {
  void options;
  throw new Error("not yet");
}
