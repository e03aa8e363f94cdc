import type { Locale } from "../i18n/index.ts";

/**
 * Messages the dialogue cannot go on without: a question the person must answer, the draft and
 * its buttons, a prompt for what to change. When a send of one of these may or may not have
 * reached the chat, it is sent once more, marked "(resent)" — a visible near-duplicate beats a
 * conversation that silently stalls. Every other message is never resent on a doubt: it is
 * recorded as `uncertain` (and counted), because a duplicate is worse than a missing notice.
 */
const MUST_DELIVER: ReadonlySet<string> = new Set([
  "task.questions",
  "task.draft-ready",
  "task.edit-prompt",
  "task.repo-not-found",
  "task.turn-limit",
  "task.budget-exceeded",
]);

export function isMustDeliver(template: string): boolean {
  return MUST_DELIVER.has(template);
}

const RESENT: Record<Locale, string> = { en: "(resent)", ru: "(отправлено повторно)" };

/** Put before a message sent again after a doubtful first send, so the person sees why it is twice. */
export function resentLeadIn(locale: Locale): string {
  return `<i>${RESENT[locale]}</i>\n`;
}
