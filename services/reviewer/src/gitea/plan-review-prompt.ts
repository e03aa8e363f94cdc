import { visibleText } from "@ratatoskr/gitea";

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
  const body = visibleText(input.body ?? "");
  return [
    `Plan review of Gitea command #${input.taskId}, round ${input.round}: ${visibleText(input.title ?? "") || "(untitled)"}`,
    ...(body ? ["", "The issue:", body] : []),
    "",
    "The plan to review (the working tree holds the repository's default branch; read what you need):",
    "",
    input.plan,
    "",
    "Judge whether the plan solves the issue, fits the code and misses nothing essential.",
    'Answer with the JSON verdict only: {"passed": …, "summary": …, "findings": [{"severity", "file", "line", "text"}]}.',
  ].join("\n");
}
