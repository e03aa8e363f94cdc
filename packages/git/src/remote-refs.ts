import type { Workspace } from "./git-workspaces.ts";

/** Ref name → object id, as the remote lists them. */
export type RemoteRefs = ReadonlyMap<string, string>;

/** A ref that is not what it was: created (`before` undefined), deleted (`after` undefined) or moved. */
export interface MovedRef {
  /** `owner/name` of the repository. */
  readonly repo: string;
  readonly ref: string;
  readonly before?: string;
  readonly after?: string;
}

/** `git ls-remote` output (`<sha>\t<ref>` lines). */
export function parseLsRemote(output: string): RemoteRefs {
  const refs = new Map<string, string>();
  for (const line of output.split("\n")) {
    const match = /^([0-9a-f]{40,64})\t(\S+)$/.exec(line.trim());
    if (match?.[1] && match[2]) refs.set(match[2], match[1]);
  }
  return refs;
}

/**
 * Refs that only the host itself writes or that follow another ref: HEAD (the default branch's
 * moves already show under its own name) and a pull request's `refs/pull/*` (the host moves them
 * when the PR's branch moves; no push can write them).
 */
function derived(ref: string): boolean {
  return ref === "HEAD" || ref.startsWith("refs/pull/");
}

/** Every ref of `after` that differs from `before`, except the refs in `allowed` (pure). */
export function movedRefs(repo: string, before: RemoteRefs, after: RemoteRefs, allowed: ReadonlySet<string>): MovedRef[] {
  const moved: MovedRef[] = [];
  for (const ref of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    if (allowed.has(ref) || derived(ref) || before.get(ref) === after.get(ref)) continue;
    moved.push({ repo, ref, ...(before.has(ref) ? { before: before.get(ref) } : {}), ...(after.has(ref) ? { after: after.get(ref) } : {}) });
  }
  return moved;
}

/** One line a person reads, e.g. `refs/heads/main of demo/hello moved 1a2b3c4 → 5d6e7f8`. */
export function describeMovedRef(m: MovedRef): string {
  const short = (sha: string | undefined) => sha?.slice(0, 7) ?? "";
  const what = m.before === undefined ? `was created at ${short(m.after)}` : m.after === undefined ? `was deleted (was ${short(m.before)})` : `moved ${short(m.before)} → ${short(m.after)}`;
  return `${m.ref} of ${m.repo} ${what}`;
}

/** The task fails with this when a run moved a ref other than the task branch. */
export function movedRefsReason(moved: readonly MovedRef[]): string {
  return (
    `refused: during the agent's run, refs other than the task branch changed on the git host: ${moved.map(describeMovedRef).join("; ")}. ` +
    "Only Ratatoskr pushes, and only the task branch; check who changed them, and restore them if it was not a person"
  );
}

export interface RemoteRefWatch {
  /** Refs other than each tree's task branch that changed since the watch began (empty: none). */
  moved(): Promise<MovedRef[]>;
}

/**
 * Notes every ref of each tree's repository before an agent runs; {@link RemoteRefWatch.moved}
 * lists what changed since, apart from the task branch (only the service pushes it, after the run).
 */
export async function watchRemoteRefs(
  git: { remoteRefs(ws: Workspace): Promise<RemoteRefs> },
  workspaces: readonly Workspace[],
): Promise<RemoteRefWatch> {
  const before = await Promise.all(workspaces.map((ws) => git.remoteRefs(ws)));
  return {
    async moved() {
      const found: MovedRef[] = [];
      for (const [i, ws] of workspaces.entries()) {
        const after = await git.remoteRefs(ws);
        found.push(...movedRefs(ws.repo.fullName, before[i] ?? new Map(), after, new Set([`refs/heads/${ws.branch}`])));
      }
      return found;
    },
  };
}

/** The task fails with this when a read-only agent's run changed its working trees anyway. */
export function readOnlyBreachReason(agent: string, repos: readonly string[]): string {
  return `refused: the ${agent} agent may not change anything, yet its run changed ${repos.join(", ")}; its verdict is not used`;
}

export interface TreeWatch {
  /** `owner/name` of each tree the run changed (a file, a commit, the branch); empty: none. */
  changed(): Promise<string[]>;
}

/** For read-only agents (reviewer, planner): notes each tree's state so a change by the run shows. */
export async function watchTrees(git: { treeState(ws: Workspace): Promise<string> }, workspaces: readonly Workspace[]): Promise<TreeWatch> {
  const before = await Promise.all(workspaces.map((ws) => git.treeState(ws)));
  return {
    async changed() {
      const changed: string[] = [];
      for (const [i, ws] of workspaces.entries()) if ((await git.treeState(ws)) !== before[i]) changed.push(ws.repo.fullName);
      return changed;
    },
  };
}
