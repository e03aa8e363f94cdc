import type { Task } from "@ratatoskr/db";
import type { TemplateId } from "../i18n/index.ts";

/** The task columns a message may draw on. */
export type TaskFacts = Pick<
  Task,
  "id" | "locale" | "title" | "goal" | "repos" | "why" | "acceptanceCriteria" | "branch" | "prUrl"
>;

/** Shown where the task has no value yet; better than losing the whole message. */
const NOT_SET = "—";

type Params = Record<string, unknown>;

/**
 * The state machine's notify effects carry ids and small facts, not the task (payloads carry
 * ids, not state); these add what a template shows from the task row as it is when the message
 * goes out.
 */
const FROM_TASK: Partial<Record<TemplateId, (task: TaskFacts) => Params>> = {
  "task.draft-ready": (task) => ({
    title: task.title ?? NOT_SET,
    goal: task.goal ?? NOT_SET,
    repos: task.repos,
    why: task.why ?? NOT_SET,
    acceptanceCriteria: task.acceptanceCriteria,
  }),
  "task.success": (task) => ({ branch: task.branch ?? NOT_SET, prUrl: task.prUrl }),
};

/** Templates whose render needs the task row (the rest are complete as the producer stored them). */
export function needsTask(template: string): boolean {
  return template in FROM_TASK;
}

/** The reducer joins lists (questions, missing repositories, findings) with "\n" because effect params are scalars; templates list them. */
function lineList(value: unknown): unknown {
  if (typeof value !== "string") return value;
  return value
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/**
 * Stored params completed for rendering. What the producer stored wins over the task row, so a
 * notification created with complete params (ingress replies) renders exactly as written.
 */
export function enrichParams(template: string, stored: Params, task: TaskFacts | null): Params {
  const fromTask = task ? (FROM_TASK[template as TemplateId]?.(task) ?? {}) : {};
  const merged: Params = { ...fromTask, ...stored };
  if (template === "task.questions") merged.questions = lineList(merged.questions);
  if (template === "task.repo-not-found") merged.missing = lineList(merged.missing);
  // Findings may come as lines or as a list; anything else (a bare count) is not a list to show.
  if (template === "task.failed") {
    const findings = lineList(merged.findings);
    merged.findings = Array.isArray(findings) ? findings : undefined;
  }
  return merged;
}
