import type { Locale, TemplateId } from "../i18n/index.ts";

/** Templates that are sent as messages (the `button.*` ones are labels on other messages). */
type MessageTemplate = Exclude<TemplateId, `button.${string}`>;

/**
 * What a lost message costs the person, which decides what a send in doubt (its answer lost, or
 * its notifier dead mid-send) becomes:
 * - `acts`: the person must act on it (a question, the draft, a pause waiting for a decision);
 * - `outcome`: it tells how the task ended or where it stands (running, a round, success, failed,
 *   timeout, cancelled, the postmortem) — P7: the person is told each of these;
 * - `acknowledgement`: a direct answer to the person's own command or button press (help, a
 *   status listing, "approved", "restarted"): if it is lost, asking again gets it.
 * `acts` and `outcome` are must-deliver: sent once more, marked "(resent)" — a visible
 * near-duplicate beats a person who never learns the task ended or waits on them. Only an
 * acknowledgement is recorded `uncertain` and never resent.
 * A Record over every template: a new template is a compile error until it is classified here.
 */
const DELIVERY_CLASS: Record<MessageTemplate, "acts" | "outcome" | "acknowledgement"> = {
  "bot.greeting": "acts",
  "bot.help": "acknowledgement",
  "bot.unknown-command": "acknowledgement",
  "bot.task-number-needed": "acknowledgement",
  "bot.not-allowed": "acknowledgement",
  "bot.text-only": "acknowledgement",
  "bot.versions": "acknowledgement",
  "bot.attach": "acknowledgement",
  "bot.attach-none": "acknowledgement",
  "bot.nothing-to-cancel": "acknowledgement",
  "task.not-found": "acknowledgement",
  "task.questions": "acts",
  "task.draft-ready": "acts",
  "task.edit-prompt": "acts",
  "task.repo-not-found": "acts",
  "task.turn-limit": "acts",
  "task.approved": "acknowledgement",
  "task.already-approved": "acknowledgement",
  "task.cancelled": "outcome",
  "task.aborted": "outcome",
  "task.retry-refused": "acknowledgement",
  "task.retried": "acknowledgement",
  "task.continued": "acknowledgement",
  "task.status": "acknowledgement",
  "task.running": "outcome",
  "task.dev-to-review": "outcome",
  "task.review-to-dev": "outcome",
  "task.success": "outcome",
  "task.failed": "outcome",
  "task.timeout": "outcome",
  "task.postmortem": "outcome",
  "task.postmortem-unavailable": "outcome",
  "task.budget-exceeded": "acts",
  "task.budget-extended": "acknowledgement",
  "task.not-paused": "acknowledgement",
  "task.analyst-error": "acts",
};

/** Templates that may be dropped when in doubt: the acknowledgements. */
export const DROPPABLE_TEMPLATES: readonly string[] = Object.entries(DELIVERY_CLASS)
  .filter(([, kind]) => kind === "acknowledgement")
  .map(([template]) => template);

const DROPPABLE: ReadonlySet<string> = new Set(DROPPABLE_TEMPLATES);

/**
 * True unless the template is a known acknowledgement: a template this notifier does not know
 * (stored by a newer producer) is resent rather than silently lost.
 */
export function isMustDeliver(template: string): boolean {
  return !DROPPABLE.has(template);
}

const RESENT: Record<Locale, string> = { en: "(resent)", ru: "(отправлено повторно)" };

/** Put before a message sent again after a doubtful first send, so the person sees why it is twice. */
export function resentLeadIn(locale: Locale): string {
  return `<i>${RESENT[locale]}</i>\n`;
}
