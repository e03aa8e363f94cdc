import { render, type Locale, type TemplateId, type TemplateParams } from "@ratatoskr/notifier";

/** Telegram cuts answerCallbackQuery texts at 200 characters. */
const TOAST_LIMIT = 200;

const ENTITIES: Record<string, string> = {
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
  "&amp;": "&",
};

/**
 * A catalogue text as a toast: toasts are plain text, so the HTML the notifier's templates
 * produce is reduced to its visible text. Same words as in the chat, one catalogue.
 */
export function toastText<K extends TemplateId>(
  locale: Locale,
  template: K,
  params: TemplateParams[K],
): string {
  const plain = render(locale, template, params)
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:lt|gt|quot|#39|amp);/g, (entity) => ENTITIES[entity] ?? entity)
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > TOAST_LIMIT ? `${plain.slice(0, TOAST_LIMIT - 1)}…` : plain;
}
