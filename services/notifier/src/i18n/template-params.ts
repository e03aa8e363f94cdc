import type { TelegramStatus } from "@ratatoskr/contracts";

export type Locale = "ru" | "en";
export const LOCALES: readonly Locale[] = ["ru", "en"];

type NoParams = Record<string, never>;

/** One agent run as `/status N` lists it. */
export interface TraceLine {
  agent: string;
  /** The run's status as stored on the trace (e.g. `succeeded`, `failed`, `timeout`). */
  outcome: string;
  durationMs: number;
  tokens: number;
  costUsd: number;
}

export interface ServiceVersion {
  name: string;
  version: string;
}

/** What exactly was wrong with the analyst's answer; each has a safe, specific text. */
export type AnalystProblem =
  "no-verdict" | "invalid-json" | "no-phase" | "unknown-phase" | "invalid-fields" | "timeout" | "unavailable";

/**
 * Every bot text and its parameters. String parameters are HTML-escaped by `render`, so a
 * template may put them anywhere, attribute values included.
 */
export interface TemplateParams {
  "bot.greeting": { taskId: number };
  "bot.help": NoParams;
  "bot.unknown-command": { command: string };
  /** `command` without the slash; `given` is what followed it, null when nothing did. */
  "bot.task-number-needed": { command: string; given: string | null };
  "bot.not-allowed": NoParams;
  /** A photo, sticker or voice without a caption: the bot reads text only. */
  "bot.text-only": NoParams;
  "bot.versions": { services: ServiceVersion[] };
  "bot.attach": { taskId: number; serverUrl: string; sessionId: string };
  "bot.nothing-to-cancel": NoParams;
  "button.approve": NoParams;
  "button.edit": NoParams;
  "button.cancel": NoParams;
  "task.not-found": { taskId: number };
  "task.questions": { taskId: number; questions: string[] };
  "task.draft-ready": {
    taskId: number;
    title: string;
    goal: string;
    repos: string[];
    why: string;
    acceptanceCriteria: string[];
  };
  "task.edit-prompt": { taskId: number };
  "task.repo-not-found": { taskId: number; missing: string[] };
  "task.turn-limit": { taskId: number; maxTurns: number };
  "task.approved": { taskId: number };
  "task.already-approved": { taskId: number };
  "task.cancelled": { taskId: number };
  "task.aborted": { taskId: number; reason: string };
  "task.retry-refused": { taskId: number; status: TelegramStatus };
  "task.retried": { taskId: number };
  "task.continued": { taskId: number };
  "task.status": {
    taskId: number;
    status: TelegramStatus;
    title: string;
    repos: string[];
    round: number;
    maxRounds: number;
    /** Most recent last; the template shows them all, the caller picks how many. */
    traces: TraceLine[];
  };
  "task.running": { taskId: number };
  "task.dev-to-review": { taskId: number; round: number };
  "task.review-to-dev": { taskId: number; round: number; findings: number };
  "task.success": { taskId: number; branch: string; prUrl: string | null };
  "task.failed": { taskId: number; reason: string };
  "task.timeout": { taskId: number };
  "task.postmortem": { taskId: number; cause: "failed" | "timeout"; why: string; whatToDo: string };
  "task.analyst-error": { taskId: number; problem: AnalystProblem };
}

export type TemplateId = keyof TemplateParams;

export const TEMPLATE_IDS = [
  "bot.greeting",
  "bot.help",
  "bot.unknown-command",
  "bot.task-number-needed",
  "bot.not-allowed",
  "bot.text-only",
  "bot.versions",
  "bot.attach",
  "bot.nothing-to-cancel",
  "button.approve",
  "button.edit",
  "button.cancel",
  "task.not-found",
  "task.questions",
  "task.draft-ready",
  "task.edit-prompt",
  "task.repo-not-found",
  "task.turn-limit",
  "task.approved",
  "task.already-approved",
  "task.cancelled",
  "task.aborted",
  "task.retry-refused",
  "task.retried",
  "task.continued",
  "task.status",
  "task.running",
  "task.dev-to-review",
  "task.review-to-dev",
  "task.success",
  "task.failed",
  "task.timeout",
  "task.postmortem",
  "task.analyst-error",
] as const satisfies readonly TemplateId[];

// A template added to TemplateParams but not to TEMPLATE_IDS fails to compile here.
type Unlisted = Exclude<TemplateId, (typeof TEMPLATE_IDS)[number]>;
export const ALL_TEMPLATES_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;
