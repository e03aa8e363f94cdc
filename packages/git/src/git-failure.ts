import {
  GitAuthError,
  GitCommandError,
  GitHostUnreachableError,
  RepoNotFoundError,
  WorkspaceIoError,
  type GitWorkspaceError,
} from "./errors/git-workspace.error.ts";

/** What was being done, for the message a person reads. */
export interface GitFailureContext {
  /** e.g. "clone", "fetch", "push", "commit". */
  readonly op: string;
  /** `owner/name`. */
  readonly repo: string;
  /** The host or local root, never with credentials. */
  readonly where: string;
}

const RULES: ReadonlyArray<{ test: RegExp; make: (ctx: GitFailureContext, detail: string) => GitWorkspaceError }> = [
  {
    test: /No space left on device|Disk quota exceeded|Permission denied|Read-only file system|unable to create file|could not create (?:work tree|leading directories)|Operation not permitted/i,
    make: (ctx, detail) => new WorkspaceIoError(`${ctx.op} of ${ctx.repo}: cannot write the workspace (${detail})`),
  },
  {
    test: /Authentication failed|could not read (?:Username|Password)|returned error: 40[13]|HTTP Basic: Access denied/i,
    make: (ctx) => new GitAuthError(`${ctx.op} of ${ctx.repo}: ${ctx.where} refused the git credentials`),
  },
  {
    test: /repository '.*' not found|does not appear to be a git repository|returned error: 404|Repository not found|Remote branch .* not found|couldn't find remote ref/i,
    make: (ctx, detail) => new RepoNotFoundError(`${ctx.op}: repository ${ctx.repo} was not found on ${ctx.where} (${detail})`),
  },
  {
    test: /Could not resolve host|Failed to connect|Connection refused|Connection timed out|Operation timed out|Couldn't connect|Empty reply from server|returned error: 5\d\d|RPC failed|unable to access|timed out|block timeout/i,
    make: (ctx, detail) => new GitHostUnreachableError(`${ctx.op} of ${ctx.repo}: git host ${ctx.where} is unreachable (${detail})`),
  },
];

/** Turns git's output of a failed command into the typed error callers can act on. */
export function classifyGitFailure(output: string, ctx: GitFailureContext): GitWorkspaceError {
  const detail = firstFatalLine(output);
  for (const rule of RULES) if (rule.test.test(output)) return rule.make(ctx, detail);
  return new GitCommandError(`${ctx.op} of ${ctx.repo} failed: ${detail}`);
}

/** The most telling line of git's stderr (`fatal:`/`error:`), trimmed for a message. */
export function firstFatalLine(output: string): string {
  const lines = output.split("\n").map((l) => l.trim()).filter(Boolean);
  const fatal = lines.find((l) => /^(fatal|error):/i.test(l)) ?? lines[0] ?? "no output";
  return fatal.slice(0, 300);
}
