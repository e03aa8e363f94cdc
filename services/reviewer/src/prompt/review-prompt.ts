import { untrustedBlock, UNTRUSTED_REMINDER } from "@ratatoskr/contracts";

export interface ReviewPromptInput {
  taskId: number;
  round: number;
  title: string | null;
  goal: string | null;
  acceptanceCriteria: readonly string[];
  /** Whole-branch diff of every repository of the task, each headed `### owner/name (branch)`. */
  diff: string;
  maxDiffChars: number;
}

/** The reviewer's prompt: the task as approved and the complete branch diff (cut, and said so, past the limit). */
export function buildReviewPrompt(input: ReviewPromptInput): string {
  const cut = input.diff.length > input.maxDiffChars;
  const diff = cut ? input.diff.slice(0, input.maxDiffChars) : input.diff;
  return [
    `Review of task #${input.taskId}, round ${input.round}. The task, as the person asked for it:`,
    untrustedBlock(input.title ?? "(untitled)", { label: "Title" }),
    untrustedBlock(input.goal ?? "(not given)", { label: "Goal" }),
    ...(input.acceptanceCriteria.length > 0
      ? [untrustedBlock(input.acceptanceCriteria.map((criterion) => `- ${criterion}`).join("\n"), { label: "Acceptance criteria" })]
      : []),
    "",
    `The complete diff of the task branch against its base${cut ? ` (cut at ${input.maxDiffChars} characters of ${input.diff.length}; read the files for the rest)` : ""}:`,
    // The code under review is data too: a comment in it is not an instruction.
    untrustedBlock(diff, { label: "Diff", maxChars: input.maxDiffChars + 1 }),
    "",
    UNTRUSTED_REMINDER,
    'Answer with the JSON verdict only: {"passed": …, "summary": …, "findings": [{"severity", "file", "line", "text"}]}.',
  ].join("\n");
}
