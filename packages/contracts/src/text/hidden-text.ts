/**
 * Code point ranges a reader never sees but a model reads: the soft hyphen, combining grapheme
 * joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels, Mongolian selectors,
 * zero-width characters and bidi controls, word joiner and invisible operators, the BOM,
 * interlinear annotation, and the tag characters and supplementary variation selectors that
 * are used to smuggle text.
 */
const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x3164, 0x3164],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff9, 0xfffb],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
];

export function isInvisible(codePoint: number): boolean {
  return INVISIBLE_RANGES.some(([from, to]) => codePoint >= from && codePoint <= to);
}

/** The text without the characters of {@link INVISIBLE_RANGES} (chat text: nothing else hides). */
export function withoutInvisible(text: string): string {
  let out = "";
  for (const char of text) if (!isInvisible(char.codePointAt(0) ?? 0)) out += char;
  return out;
}

/** `<!-- … -->`, and an unterminated `<!--` (hides everything after it when rendered). */
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;

/** Markdown "comments": a link reference definition to `#`, e.g. `[//]: # (hidden)`. Never rendered. */
const MARKDOWN_COMMENT = /^ {0,3}\[[^\]\n]*\]:[ \t]*#[^\n]*(?:\n|$)/gm;

/**
 * What a person reading the rendered Markdown of an issue or comment sees, as text: hidden prompt
 * injection removed before anything reaches an agent (G2). Visible text is kept as written.
 */
export function visibleText(text: string): string {
  return withoutInvisible(text)
    .replace(HTML_COMMENT, "")
    .replace(MARKDOWN_COMMENT, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
