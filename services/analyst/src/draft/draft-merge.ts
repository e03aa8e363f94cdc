import type { DraftFields } from "../verdict/analyst-verdict.schema.ts";
import { normalizeRepoName } from "./repo-name.ts";

/** The draft as stored on the task row. */
export interface TaskDraft {
  title: string | null;
  goal: string | null;
  repos: string[];
  why: string | null;
  acceptanceCriteria: string[];
}

/** Draft columns to write (only the ones that change). */
export type DraftPatch = Partial<TaskDraft>;

export interface MergedDraft {
  draft: TaskDraft;
  patch: DraftPatch;
  /** Names of the fields whose value changed, in draft order. */
  changed: Array<keyof TaskDraft>;
}

const FIELDS = ["title", "goal", "repos", "why", "acceptanceCriteria"] as const;

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Normalized, without duplicates, in the order given. */
function repoList(repos: readonly string[]): string[] {
  return [...new Set(repos.map(normalizeRepoName).filter((name) => name.length > 0))];
}

/** Applies the analyst's proposal to the current draft; fields it did not name stay as they are. */
export function mergeDraft(current: TaskDraft, proposal: DraftFields): MergedDraft {
  const proposed: DraftPatch = {
    ...(proposal.title !== undefined ? { title: proposal.title } : {}),
    ...(proposal.goal !== undefined ? { goal: proposal.goal } : {}),
    ...(proposal.repos !== undefined ? { repos: repoList(proposal.repos) } : {}),
    ...(proposal.why !== undefined ? { why: proposal.why } : {}),
    ...(proposal.acceptanceCriteria !== undefined ? { acceptanceCriteria: proposal.acceptanceCriteria } : {}),
  };
  const patch: DraftPatch = {};
  const changed: Array<keyof TaskDraft> = [];
  for (const field of FIELDS) {
    if (!(field in proposed) || sameValue(proposed[field], current[field])) continue;
    (patch as Record<string, unknown>)[field] = proposed[field];
    changed.push(field);
  }
  return { draft: { ...current, ...patch }, patch, changed };
}

/** The patch without its repository list (repositories that failed the check are not stored). */
export function withoutRepos(patch: DraftPatch): DraftPatch {
  const { repos: _repos, ...rest } = patch;
  return rest;
}
