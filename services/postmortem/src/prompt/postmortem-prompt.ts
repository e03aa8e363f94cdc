import { doorTexts, untrustedBlock, UNTRUSTED_REMINDER, type TaskSource } from "@ratatoskr/contracts";
import { digestTraces, type TraceForDigest } from "./trace-digest.ts";

export interface PostmortemPromptInput {
  taskId: number;
  cause: "failed" | "timeout";
  /** The reason the state machine recorded (run.failed), when there is one. */
  reason: string | null;
  task: { title: string | null; goal: string | null; repos: readonly string[]; acceptanceCriteria: readonly string[]; round: number; maxRounds: number; branch: string | null };
  traces: readonly TraceForDigest[];
  traceBudgetChars: number;
  /** "ru" | "en": the language the person reads. */
  language: string;
  /** The door the person asked through: how they retry or resume it. */
  source: TaskSource;
}

/** The postmortem agent's prompt: the task, how it ended, and its runs trimmed to the budget. */
export function buildPostmortemPrompt(input: PostmortemPromptInput): string {
  const t = input.task;
  const door = doorTexts(input.source);
  const how =
    input.cause === "timeout"
      ? `It timed out (an agent run made no progress or ran too long). Its work so far is pushed and ${door.resume(input.taskId)} resumes the same session.`
      : `It failed; ${door.retry(input.taskId)}.`;
  const task = [
    `title: ${t.title ?? "(none)"}`,
    `goal: ${t.goal ?? "(none)"}`,
    `repositories: ${t.repos.join(", ") || "(none)"}`,
    `acceptance criteria:${t.acceptanceCriteria.length === 0 ? " (none)" : ""}`,
    ...t.acceptanceCriteria.map((c) => `- ${c}`),
    `branch: ${t.branch ?? "(not created)"}`,
  ].join("\n");
  return [
    `Task #${input.taskId} ended as ${input.cause}, in round ${t.round} of at most ${t.maxRounds}. ${how}`,
    ...(input.reason ? ["Recorded reason:", untrustedBlock(input.reason, { label: "Why the task ended" })] : []),
    "",
    "## The task",
    untrustedBlock(task, { label: "The task, as the person asked for it" }),
    "",
    "## Agent runs, oldest first (long texts are cut in the middle)",
    // Prompts and outputs quote people and code: data to explain, never instructions.
    untrustedBlock(digestTraces(input.traces, input.traceBudgetChars), { label: "Agent runs", maxChars: input.traceBudgetChars + 10_000 }),
    "",
    UNTRUSTED_REMINDER,
    "## Your answer",
    `Write in ${input.language === "ru" ? "Russian" : "English"}. Answer with exactly one JSON object and nothing else:`,
    '{"cause":"why it happened, with the evidence","progress":"how far the work got","nextSteps":["what the person should do"]}',
  ].join("\n");
}
