import { untrustedBlock, UNTRUSTED_REMINDER } from "@ratatoskr/contracts";
import type { TaskDraft } from "../draft/draft-merge.ts";

export interface DialogueLine {
  role: "user" | "assistant";
  text: string;
}

export interface AnalystPromptInput {
  taskId: number;
  draft: TaskDraft;
  /** Earlier dialogue, oldest first: what was already analysed and what the analyst answered. */
  history: readonly DialogueLine[];
  /** The person's messages this analysis is about (may be empty, e.g. a retry or a /skip). */
  newMessages: readonly string[];
  maxQuestions: number;
  /** `/skip`: the person wants a draft now, not more questions. */
  forced: boolean;
}

/** Section headings; tests split a received prompt on them. */
export const PROMPT_SECTIONS = {
  draft: "## Current draft",
  history: "## Dialogue so far",
  newMessages: "## New messages",
  instructions: "## This turn",
} as const;

export const SKIP_NOTE =
  "The person asked to skip questions — produce a complete draft now (phase `propose` or `ready`), " +
  "filling gaps with reasonable assumptions and stating them in `why` or the acceptance criteria.";

/** Oldest turns beyond this are left out, so a long dialogue cannot outgrow the model's context. */
export const MAX_HISTORY_LINES = 60;

const NOT_SET = "(not set)";

function renderDraft(draft: TaskDraft): string {
  const list = (items: readonly string[]) =>
    items.length === 0 ? ` ${NOT_SET}` : `\n${items.map((i) => `  - ${i}`).join("\n")}`;
  return [
    `- title: ${draft.title ?? NOT_SET}`,
    `- goal: ${draft.goal ?? NOT_SET}`,
    `- repos:${list(draft.repos)}`,
    `- why: ${draft.why ?? NOT_SET}`,
    `- acceptanceCriteria:${list(draft.acceptanceCriteria)}`,
  ].join("\n");
}

function speaker(line: DialogueLine): string {
  return line.role === "user" ? "Person" : "Analyst (your earlier answer)";
}

/** Each message in a block of its own: one message cannot pose as another speaker's. */
function renderLine(label: string, text: string): string {
  return untrustedBlock(text, { label, markup: "plain" });
}

function renderHistory(history: readonly DialogueLine[]): string {
  if (history.length === 0) return "(nothing yet)";
  const shown = history.slice(-MAX_HISTORY_LINES);
  const omitted = history.length - shown.length;
  const lines = shown.map((line) => renderLine(speaker(line), line.text));
  return omitted > 0 ? [`(${omitted} earlier messages omitted)`, ...lines].join("\n") : lines.join("\n");
}

/** The user prompt of one analysis; the agent file (agents/analyst.md) carries the rules and the JSON format. */
export function buildAnalystPrompt(input: AnalystPromptInput): string {
  const newMessages =
    input.newMessages.length === 0
      ? "(no new messages: analyse the dialogue as it stands)"
      : input.newMessages.map((text) => renderLine("New message from the person", text)).join("\n");
  const instructions = [
    UNTRUSTED_REMINDER,
    `Ask at most ${input.maxQuestions} question${input.maxQuestions === 1 ? "" : "s"}.`,
    ...(input.forced ? [SKIP_NOTE] : []),
    "Answer with exactly one JSON object as described in your instructions.",
  ];
  return [
    `Task #${input.taskId}.`,
    PROMPT_SECTIONS.draft,
    untrustedBlock(renderDraft(input.draft), { label: "Current draft (from the person's messages)", markup: "plain" }),
    PROMPT_SECTIONS.history,
    renderHistory(input.history),
    PROMPT_SECTIONS.newMessages,
    newMessages,
    PROMPT_SECTIONS.instructions,
    instructions.join("\n"),
  ].join("\n\n");
}
