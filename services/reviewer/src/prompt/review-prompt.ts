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
    `Review of task #${input.taskId}, round ${input.round}: ${input.title ?? "(untitled)"}`,
    "",
    `Goal: ${input.goal ?? "(not given)"}`,
    ...(input.acceptanceCriteria.length > 0
      ? ["", "Acceptance criteria:", ...input.acceptanceCriteria.map((criterion) => `- ${criterion}`)]
      : []),
    "",
    `The complete diff of the task branch against its base${cut ? ` (cut at ${input.maxDiffChars} characters of ${input.diff.length}; read the files for the rest)` : ""}:`,
    "",
    "```diff",
    diff,
    "```",
    "",
    'Answer with the JSON verdict only: {"passed": …, "summary": …, "findings": [{"severity", "file", "line", "text"}]}.',
  ].join("\n");
}
