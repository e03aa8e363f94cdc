import { stripSlash, type RemoteSpec } from "./remote-spec.ts";

export interface GitAuthor {
  readonly name: string;
  readonly email: string;
}

/**
 * Configuration every git child gets through `GIT_CONFIG_COUNT`. It has command-line precedence,
 * so it beats whatever the agent may have written into the workspace's `.git/config`: no hooks,
 * no fsmonitor, no credential helpers, no external diff programs, no `ext::` transport.
 */
const HARDENING: ReadonlyArray<readonly [string, string]> = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["credential.helper", ""],
  ["commit.gpgSign", "false"],
  ["protocol.ext.allow", "never"],
  ["diff.external", ""],
  ["advice.detachedHead", "false"],
  // No `gc --auto` left running behind a command: a command is done when its output closes.
  ["gc.auto", "0"],
];

/** Names of every variable {@link gitEnv} may set (simple-git blocks unlisted `GIT_*` ones). */
export function gitEnvNames(env: Record<string, string>): string[] {
  return Object.keys(env).filter((k) => k.startsWith("GIT_"));
}

/**
 * The complete environment of one git child process. Built from scratch (not `process.env`), so
 * no service secret reaches git; the token is added only when `withCredentials` (fetch, clone,
 * push), as an `http.<baseUrl>/.extraHeader` scoped to the configured host, so a rewritten remote
 * never receives it.
 */
export function gitEnv(input: {
  remote: RemoteSpec;
  author: GitAuthor;
  withCredentials: boolean;
  base?: NodeJS.ProcessEnv;
}): Record<string, string> {
  const base = input.base ?? process.env;
  const config: Array<readonly [string, string]> = [...HARDENING];
  if (input.withCredentials && input.remote.kind === "http") {
    const basic = Buffer.from(`${input.remote.username}:${input.remote.token}`).toString("base64");
    config.push([`http.${stripSlash(input.remote.baseUrl)}/.extraHeader`, `Authorization: Basic ${basic}`]);
  }
  const env: Record<string, string> = {
    PATH: base.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: base.HOME ?? "/tmp",
    LANG: "C",
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: input.author.name,
    GIT_AUTHOR_EMAIL: input.author.email,
    GIT_COMMITTER_NAME: input.author.name,
    GIT_COMMITTER_EMAIL: input.author.email,
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Removes the token (raw and base64 forms) from text that may have come from git or an error. */
export function redactSecrets(text: string, remote: RemoteSpec): string {
  if (remote.kind !== "http" || remote.token === "") return text;
  const basic = Buffer.from(`${remote.username}:${remote.token}`).toString("base64");
  return text.split(remote.token).join("***").split(basic).join("***");
}
