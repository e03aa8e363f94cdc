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

/** The agent run in progress as `/status N` shows it (O6): its spend is in the task's totals. */
export interface LiveLine {
  /** The agent at work (`dev`, `reviewer`). */
  stage: string;
  round: number | null;
  /** Its newest tool call, null before the first. */
  lastTool: string | null;
  /** `opencode attach <serverUrl> --session <sessionId>` watches it. */
  serverUrl: string;
  sessionId: string;
}

export interface ServiceVersion {
  name: string;
  version: string;
}

/** What exactly was wrong with the analyst's answer; each has a safe, specific text. */
export type AnalystProblem =
  | "no-verdict"
  | "invalid-json"
  | "no-phase"
  | "unknown-phase"
  | "invalid-fields"
  | "timeout"
  | "unavailable"
  | "provider-refused"
  | "server-misconfigured"
  | "worker-died"
  | "internal";

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
  /** `/attach N` while no agent run of the task is live. */
  "bot.attach-none": { taskId: number; status: TelegramStatus };
  "bot.nothing-to-cancel": NoParams;
  "button.approve": NoParams;
  "button.edit": NoParams;
  "button.cancel": NoParams;
  "button.more-budget": NoParams;
  "button.stop": NoParams;
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
    /** The task branch once the first round pushed it. */
    branch: string | null;
    /** Most recent last; the template shows them all, the caller picks how many. */
    traces: TraceLine[];
    /** The run in progress, null between runs. */
    live: LiveLine | null;
    /** Every run of the task, not only the ones listed, the one in progress included. */
    totalTokens: number;
    totalCostUsd: number;
    /** The task's budget (P5), null when it has none. */
    budgetUsd: number | null;
  };
  "task.running": { taskId: number };
  "task.dev-to-review": { taskId: number; round: number };
  "task.review-to-dev": { taskId: number; round: number; findings: number };
  /** `commit`: the pushed head (a short hash is enough), null when unknown. */
  "task.success": { taskId: number; branch: string; commit: string | null; prUrl: string | null };
  /** `findings`: the reviewer's remaining findings, one line each (empty when not a review failure). */
  "task.failed": { taskId: number; reason: string; findings: string[] };
  "task.timeout": { taskId: number };
  "task.postmortem": { taskId: number; cause: "failed" | "timeout"; why: string; whatToDo: string };
  /** The postmortem agent itself failed: the person still hears that no analysis will come. */
  "task.postmortem-unavailable": { taskId: number; reason?: string };
  /** P5: the task stopped before its next run; sent with Continue (+budget) / Stop buttons. */
  "task.budget-exceeded": { taskId: number; spentUsd: number; budgetUsd: number };
  "task.budget-extended": { taskId: number; budgetUsd: number };
  /** Continue / Stop pressed on a task the budget no longer holds (a second press): a toast. */
  "task.not-paused": { taskId: number; status: TelegramStatus };
  /** `then`: the pending message is analysed again at once ("retrying") or waits for the person (absent: "waiting"). */
  "task.analyst-error": { taskId: number; problem: AnalystProblem; then?: "retrying" | "waiting" };
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
  "bot.attach-none",
  "bot.nothing-to-cancel",
  "button.approve",
  "button.edit",
  "button.cancel",
  "button.more-budget",
  "button.stop",
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
  "task.postmortem-unavailable",
  "task.budget-exceeded",
  "task.budget-extended",
  "task.not-paused",
  "task.analyst-error",
] as const satisfies readonly TemplateId[];

// A template added to TemplateParams but not to TEMPLATE_IDS fails to compile here.
type Unlisted = Exclude<TemplateId, (typeof TEMPLATE_IDS)[number]>;
export const ALL_TEMPLATES_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;
