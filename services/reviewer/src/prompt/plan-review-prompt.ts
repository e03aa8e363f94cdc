import { isBlankText, untrustedBlock, UNTRUSTED_REMINDER } from "@ratatoskr/contracts";

export interface PlanReviewPromptInput {
  taskId: number;
  round: number;
  title: string | null;
  /** The description (hidden text already stripped by intake; stripped again here). */
  body: string | null;
  plan: string;
}

/** The reviewer's prompt for a plan of `/agent plan` / `iterate`: the issue and the plan, read against the code. */
export function buildPlanReviewPrompt(input: PlanReviewPromptInput): string {
  return [
    `Plan review of Gitea command #${input.taskId}, round ${input.round}.`,
    untrustedBlock(input.title || "(untitled)", { label: "Issue title", markup: "markdown" }),
    ...(isBlankText(input.body, "markdown") ? [] : ["", "The issue:", untrustedBlock(input.body, { label: "Issue description", markup: "markdown" })]),
    "",
    "The plan to review (the working tree holds the repository's default branch; read what you need):",
    untrustedBlock(input.plan, { label: "Plan", markup: "markdown" }),
    "",
    UNTRUSTED_REMINDER,
    "Judge whether the plan solves the issue, fits the code and misses nothing essential.",
    'Answer with the JSON verdict only: {"passed": …, "summary": …, "findings": [{"severity", "file", "line", "text"}]}.',
  ].join("\n");
}
