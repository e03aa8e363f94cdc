import { createRequire } from "node:module";
import type * as SimpleGit from "simple-git";
import { classifyGitFailure, type GitFailureContext } from "./git-failure.ts";
import { gitEnv, gitEnvNames, redactSecrets, type GitAuthor } from "./git-env.ts";
import type { RemoteSpec } from "./remote-spec.ts";

export interface GitRunnerOptions {
  readonly remote: RemoteSpec;
  readonly author: GitAuthor;
  /** Kill a git command that produced no output for this long, in ms. */
  readonly timeoutMs: number;
  /** Told how long each command took (debug timing: the pipeline bench splits git time from it). */
  readonly onCommand?: (ctx: GitFailureContext, ms: number) => void;
}

export interface RunOptions {
  /** Add the host credentials to this command's environment (network commands only). */
  readonly withCredentials?: boolean;
  /** For the error message when the command fails. */
  readonly ctx: GitFailureContext;
  /** Maps git's (redacted) output of a failure to a more specific error; undefined = classify. */
  readonly onFailure?: (output: string) => Error | undefined;
}

/** Runs git commands in a directory with a clean, per-command environment. */
export interface GitRunner {
  run(cwd: string, args: readonly string[], opts: RunOptions): Promise<string>;
}

/** simple-git is required by the first command: an idle process never loads it. */
const simpleGitModule = (): typeof SimpleGit => createRequire(import.meta.url)("simple-git") as typeof SimpleGit;

export function createGitRunner(options: GitRunnerOptions): GitRunner {
  const git = (cwd: string, withCredentials: boolean) => {
    const { simpleGit } = simpleGitModule();
    const env = gitEnv({ remote: options.remote, author: options.author, withCredentials });
    return simpleGit({
      baseDir: cwd,
      timeout: { block: options.timeoutMs },
      // A command is done when its output is closed, not 50 ms after it exited (simple-git's
      // default): on a loaded machine output read after that window was lost, and an empty
      // ls-remote, symbolic-ref or merge-base read as "no refs", "" or "no common history".
      completion: { onClose: true, onExit: false },
      // Any exit but 0 fails, also without a word on stderr (simple-git passes those as success,
      // and a git killed by a signal then returned what it had printed so far).
      errors: (error, result) =>
        error ?? (result.exitCode === 0 ? undefined : Buffer.concat([...result.stdErr, ...result.stdOut, Buffer.from(`(git exited with ${result.exitCode ?? "a signal"})`)])),
      allowEnvironment: gitEnvNames(env),
      unsafe: { allowUnsafeConfigEnvCount: true, allowUnsafeConfigPaths: true, allowUnsafeProtocolOverride: true, allowUnsafeHooksPath: true, allowUnsafeFsMonitor: true, allowUnsafeCredentialHelper: true, allowUnsafeDiffExternal: true },
    }).env(env);
  };
  return {
    async run(cwd, args, opts) {
      const started = performance.now();
      try {
        return await git(cwd, opts.withCredentials ?? false).raw([...args]);
      } catch (error) {
        const { GitError } = simpleGitModule();
        const output = redactSecrets(error instanceof GitError ? error.message : String(error), options.remote);
        throw opts.onFailure?.(output) ?? classifyGitFailure(output, opts.ctx);
      } finally {
        options.onCommand?.(opts.ctx, Math.round(performance.now() - started));
      }
    },
  };
}
