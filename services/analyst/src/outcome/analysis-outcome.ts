import { mergeDraft, withoutRepos, type DraftPatch, type TaskDraft } from "../draft/draft-merge.ts";
import type { AnalystVerdict } from "../verdict/analyst-verdict.schema.ts";

/** What a valid verdict means for the task, before the repositories are checked. */
export type VerdictMeaning =
  | { kind: "ask"; questions: string[]; reply: string | undefined }
  | { kind: "abort"; reason: string }
  /** propose/ready that leaves the draft without any repository: ask which one, keep the rest. */
  | { kind: "needs-repository"; patch: DraftPatch; reply: string | undefined }
  /** propose/ready with repositories: they must exist before the draft is ready. */
  | { kind: "draft"; patch: DraftPatch; repos: string[]; reply: string | undefined; changed: string[] };

/** The final outcome of one analysis after the repository check. */
export type AnalysisOutcome =
  | { kind: "ask"; questions: string[]; reply: string | undefined }
  | { kind: "abort"; reason: string }
  | { kind: "needs-repository"; patch: DraftPatch; reply: string | undefined }
  | { kind: "repos-missing"; patch: DraftPatch; missing: string[] }
  | { kind: "drafted"; patch: DraftPatch; reply: string | undefined; changed: string[] };

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/**
 * Reads a verdict against the current draft. `propose` and `ready` are treated alike (apply
 * what changed, then check the repositories): a `propose` that changes nothing is a `ready`,
 * not an error. Questions beyond `maxQuestions` are dropped.
 */
export function interpretVerdict(
  verdict: AnalystVerdict,
  current: TaskDraft,
  maxQuestions: number,
): VerdictMeaning {
  switch (verdict.phase) {
    case "ask":
      // One line per question: the questions travel joined by newlines to the notifier.
      return {
        kind: "ask",
        questions: verdict.questions.slice(0, maxQuestions).map(oneLine),
        reply: verdict.reply,
      };
    case "abort":
      return { kind: "abort", reason: verdict.reason };
    case "propose":
    case "ready": {
      const merged = mergeDraft(current, verdict.phase === "propose" ? verdict.draft : {});
      if (merged.draft.repos.length === 0) {
        // An emptied repository list is not stored: the person is asked instead.
        return { kind: "needs-repository", patch: withoutRepos(merged.patch), reply: verdict.reply };
      }
      return {
        kind: "draft",
        patch: merged.patch,
        repos: merged.draft.repos,
        reply: verdict.reply,
        changed: merged.changed,
      };
    }
  }
}

/** A draft whose repositories were checked: missing ones keep the task collecting and are not stored. */
export function settleDraft(
  meaning: Extract<VerdictMeaning, { kind: "draft" }>,
  missing: readonly string[],
): AnalysisOutcome {
  if (missing.length > 0)
    return { kind: "repos-missing", patch: withoutRepos(meaning.patch), missing: [...missing] };
  return { kind: "drafted", patch: meaning.patch, reply: meaning.reply, changed: meaning.changed };
}
