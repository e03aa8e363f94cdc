import path from "node:path";
import { GitWorkspaceError } from "./errors/git-workspace.error.ts";
import type { RemoteSpec } from "./remote-spec.ts";

/** Characters a path in git's or Node's words runs on to (it ends at a space, quote, colon, bracket). */
const PATH_TAIL = String.raw`(?:/[^\s'"\`:,;()\[\]]*)?(?![\w.-])`;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Rewrites text a person may read so it never shows the server's directories: a repository under
 * the local git root (LOCAL_GIT_ROOT) becomes its `owner/name`, anything under the workspace root
 * (WORKSPACE_DIR) "the task workspace". Logs keep the real paths; messages do not need them.
 */
export function pathScrubber(remote: RemoteSpec, workspaceRoot: string): (text: string) => string {
  const rules: Array<{ root: string; as: (rel: string) => string }> = [];
  if (remote.kind === "local") {
    rules.push({ root: path.resolve(remote.root), as: (rel) => rel.replace(/^\/+/, "").replace(/\.git\/?$/, "") || "the local git root" });
  }
  rules.push({ root: path.resolve(workspaceRoot), as: () => "the task workspace" });
  // The longer root first: one may hold the other.
  rules.sort((a, b) => b.root.length - a.root.length);
  return (text) =>
    rules.reduce(
      (out, { root, as }) => out.replace(new RegExp(escape(root) + PATH_TAIL, "g"), (match) => as(match.slice(root.length))),
      text,
    );
}

/** Runs `work`, scrubbing the message of any package error it throws (see {@link pathScrubber}). */
export async function scrubbed<T>(scrub: (text: string) => string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof GitWorkspaceError) err.message = scrub(err.message);
    throw err;
  }
}
