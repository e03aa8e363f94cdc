/**
 * Messages that approve a ready draft (T4). The whole message must be one of these after
 * normalisation, so "go, but rename it" stays an edit. Plain "ok"/"да" count: the draft
 * message ends with "approve it or tell me what to change", so a bare yes means approve.
 */
const APPROVAL_PHRASES = [
  // ru
  "создавай",
  "создай",
  "создаем",
  "давай",
  "го",
  "гоу",
  "погнали",
  "поехали",
  "запускай",
  "одобряю",
  "утверждаю",
  "да",
  "ок",
  "ок го",
  "ок давай",
  "окей",
  // en
  "go",
  "go ahead",
  "approve",
  "approved",
  "ok",
  "okay",
  "ok go",
  "okay go",
  "yes",
  "lgtm",
  "ship it",
  "do it",
];

const APPROVALS: ReadonlySet<string> = new Set(APPROVAL_PHRASES);
const APPROVAL_EMOJI: ReadonlySet<string> = new Set(["👍", "✅", "🚀"]);

/** Lower case, ё → е, punctuation and symbols dropped, spaces collapsed. */
export function normalizePhrase(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replaceAll("ё", "е")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

export function isApprovalWord(text: string): boolean {
  // Variation selectors and skin tones do not change the meaning of 👍.
  const emojiOnly = text.replace(/\s|\uFE0F|\p{Emoji_Modifier}/gu, "");
  if (APPROVAL_EMOJI.has(emojiOnly)) return true;
  return APPROVALS.has(normalizePhrase(text));
}
