import { formatFinding, isBlankText, untrustedBlock, UNTRUSTED_REMINDER, type ReviewFinding } from "@ratatoskr/contracts";
import { z } from "zod";

/** The planner's strict-JSON verdict (agents/planner.md). */
export const plannerVerdictSchema = z.object({
  plan: z.string(),
  reply: z.string().default(""),
});
export type PlannerVerdict = z.infer<typeof plannerVerdictSchema>;

export interface PlannerPromptInput {
  taskId: number;
  /** `plan`, `iterate` or `discuss`. */
  command: string;
  target: string;
  requester: string;
  round: number;
  maxRounds: number;
  title: string | null;
  body: string | null;
  message: string | null;
  /** The current plan (for iterate and discuss), or the one under review. */
  currentPlan?: string | undefined;
  findings: readonly ReviewFinding[];
  /** Where the repository is, relative to the session's directory. */
  workspace: string;
}

function block(title: string, text: string | null | undefined): string[] {
  return isBlankText(text, "markdown") ? [] : ["", `${title}:`, untrustedBlock(text, { label: title, markup: "markdown" })];
}

/** What the planner is asked; every Gitea text is fenced as untrusted, as its reader sees it (G2, S4). */
export function buildPlannerPrompt(input: PlannerPromptInput): string {
  const ask =
    input.command === "discuss"
      ? "Answer the question about the current plan in `reply`, without rewriting it (return the plan unchanged in `plan`)."
      : input.findings.length > 0
        ? `The reviewer rejected your plan (round ${input.round - 1}); revise it to address each finding.`
        : input.currentPlan
          ? "Revise the current plan as requested."
          : "Write the implementation plan for this issue.";
  return [
    `Gitea command #${input.taskId}: \`/agent ${input.command}\` by @${input.requester} on ${input.target}, round ${input.round} of at most ${input.maxRounds}.`,
    ask,
    "",
    ...block("Issue title", input.title || "(untitled)"),
    ...block("Issue description", input.body),
    ...block("Current plan", input.currentPlan),
    ...block(`Request from @${input.requester}`, input.message),
    ...(input.findings.length > 0
      ? ["", "Reviewer findings:", untrustedBlock(input.findings.map((f) => `- ${formatFinding(f)}`).join("\n"), { label: "Reviewer findings" })]
      : []),
    "",
    "The repository is checked out here (read only):",
    untrustedBlock(input.workspace, { label: "Repository (branch names may be chosen by people)" }),
    UNTRUSTED_REMINDER,
    'Answer with exactly one JSON object: {"plan":"markdown plan","reply":"short message for the issue thread"}.',
  ].join("\n");
}
