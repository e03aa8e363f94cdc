import { z } from "zod";
import { LOCALES, render, TEMPLATE_IDS, type Locale, type TemplateId } from "../i18n/index.ts";
import type { InlineKeyboard } from "../telegram/index.ts";
import { budgetKeyboard, draftKeyboard } from "./draft-keyboard.ts";
import { enrichParams, type TaskFacts } from "./params-enricher.ts";
import { TEMPLATE_PARAM_SCHEMAS } from "./template-params.schema.ts";

/** The stored parts of a notification that decide what it says. */
export interface MessageSource {
  template: string;
  params: unknown;
  replyMarkup: unknown;
}

export type PreparedMessage =
  | { ok: true; locale: Locale; html: string; replyMarkup: InlineKeyboard | undefined }
  /** Retrying cannot fix it: the stored notification itself is wrong. */
  | { ok: false; problem: string };

const inlineKeyboardSchema = z.object({
  inline_keyboard: z.array(
    z.array(
      z.union([
        z.object({ text: z.string().min(1), callback_data: z.string().min(1).max(64) }),
        z.object({ text: z.string().min(1), url: z.url() }),
      ]),
    ),
  ),
});

/** Button labels are parts of messages, not messages. */
const MESSAGE_TEMPLATES: ReadonlySet<string> = new Set(
  TEMPLATE_IDS.filter((id) => !id.startsWith("button.")),
);

function isMessageTemplate(template: string): template is TemplateId {
  return MESSAGE_TEMPLATES.has(template);
}

/** The task's language when it has a known one, else the bot's configured one. */
export function pickLocale(task: Pick<TaskFacts, "locale"> | null, fallback: Locale): Locale {
  const wanted = task?.locale;
  return LOCALES.find((locale) => locale === wanted) ?? fallback;
}

/** Built once: a zod schema costs more to build than to run. */
const STORED_PARAMS_SCHEMA = z.record(z.string(), z.unknown());

function issuesOf(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ");
}

type KeyboardChoice = { ok: true; keyboard: InlineKeyboard | undefined } | { ok: false; problem: string };

/**
 * Stored markup wins; otherwise a draft gets its Approve / Edit / Cancel buttons and a budget
 * stop its Continue (+budget) / Stop buttons.
 */
function keyboardFor(
  source: MessageSource,
  template: TemplateId,
  locale: Locale,
  taskId: unknown,
): KeyboardChoice {
  if (source.replyMarkup !== null && source.replyMarkup !== undefined) {
    const stored = inlineKeyboardSchema.safeParse(source.replyMarkup);
    if (!stored.success) return { ok: false, problem: `invalid reply markup: ${issuesOf(stored.error)}` };
    return { ok: true, keyboard: stored.data };
  }
  if (template === "task.draft-ready" && typeof taskId === "number") {
    return { ok: true, keyboard: draftKeyboard(locale, taskId) };
  }
  if (template === "task.budget-exceeded" && typeof taskId === "number") {
    return { ok: true, keyboard: budgetKeyboard(locale, taskId) };
  }
  return { ok: true, keyboard: undefined };
}

/**
 * Turns a stored notification into Telegram HTML (and its keyboard) in the task's language.
 * Pure: the caller loads the task and sends the result.
 */
export function prepareMessage(
  source: MessageSource,
  task: TaskFacts | null,
  fallbackLocale: Locale,
): PreparedMessage {
  const { template } = source;
  if (!isMessageTemplate(template)) return { ok: false, problem: `unknown message template "${template}"` };
  const stored = STORED_PARAMS_SCHEMA.safeParse(source.params);
  if (!stored.success) return { ok: false, problem: `params of ${template} are not an object` };
  const parsed = TEMPLATE_PARAM_SCHEMAS[template].safeParse(enrichParams(template, stored.data, task));
  if (!parsed.success)
    return { ok: false, problem: `params of ${template} are invalid: ${issuesOf(parsed.error)}` };
  const locale = pickLocale(task, fallbackLocale);
  const keyboard = keyboardFor(source, template, locale, (parsed.data as { taskId?: unknown }).taskId);
  if (!keyboard.ok) return keyboard;
  // The schema map ties each template to its params type; TypeScript cannot follow it through a union key.
  const html = render(locale, template, parsed.data as never);
  return { ok: true, locale, html, replyMarkup: keyboard.keyboard };
}
