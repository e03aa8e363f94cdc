const REPLACEMENTS: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  // Telegram knows only four named entities; a numeric one is the safe spelling of '.
  "'": "&#39;",
};

/**
 * Makes arbitrary text safe inside Telegram HTML (`parse_mode: "HTML"`), in text and in quoted
 * attribute values alike: `&`, `<`, `>` and both quotes become entities the API decodes.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => REPLACEMENTS[ch] ?? ch);
}
