import { formatFinding, untrustedBlock, UNTRUSTED_REMINDER, type ReviewFinding } from "@ratatoskr/contracts";

export interface DevPromptInput {
  taskId: number;
  round: number;
  maxRounds: number;
  title: string | null;
  goal: string | null;
  why: string | null;
  acceptanceCriteria: readonly string[];
  /** `- owner/name: ./path (branch …)` lines, relative to the session's directory. */
  workspaces: readonly string[];
  /** The reviewer's findings of the previous round (empty on round 1). */
  findings: readonly ReviewFinding[];
}

/** A part of the prompt whose text came from people (or from an agent reading them): fenced. */
function section(title: string, lines: readonly string[]): string[] {
  return lines.length > 0 ? ["", `${title}:`, untrustedBlock(lines.join("\n"), { label: title })] : [];
}

/** The dev agent's prompt for one round: the approved draft, where to work, and what review asked. */
export function buildDevPrompt(input: DevPromptInput): string {
  return [
    `Task #${input.taskId}, round ${input.round} of at most ${input.maxRounds}. The approved task, as the person asked for it:`,
    ...section("Title", [input.title ?? "(untitled)"]),
    ...section("Goal", [input.goal ?? "(not given)"]),
    ...section("Why", input.why ? [input.why] : []),
    ...section(
      "Acceptance criteria",
      input.acceptanceCriteria.map((criterion) => `- ${criterion}`),
    ),
    ...section("Repositories (git working trees, already on the task branch)", input.workspaces),
    ...section(
      `The reviewer rejected round ${input.round - 1}; address each finding`,
      input.findings.map((finding) => `- ${formatFinding(finding)}`),
    ),
    "",
    UNTRUSTED_REMINDER,
    "Work only inside these directories. Do not commit or push: Ratatoskr commits and pushes your changes.",
  ].join("\n");
}

/** What a resumed session is told: it already has the task; its earlier work is pushed. */
export function buildContinuePrompt(taskId: number, round: number): string {
  return [
    `Task #${taskId}, round ${round}: your previous run stopped before it finished (a timeout, the budget, a failure).`,
    "What you changed so far is committed and pushed. Continue where you stopped and finish the task;",
    "end with the JSON summary as instructed.",
  ].join("\n");
}
