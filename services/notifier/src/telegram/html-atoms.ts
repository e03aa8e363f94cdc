/**
 * Telegram HTML cut into the smallest pieces a split may not break: whole tags, whole character
 * entities and whole grapheme clusters (so neither a surrogate pair nor an emoji sequence such as
 * 👩‍💻 or a flag is ever torn apart).
 */
export type HtmlAtom =
  | { kind: "open"; name: string; raw: string }
  | { kind: "close"; name: string; raw: string }
  | { kind: "text"; raw: string };

const ENTITY = /^&(?:#[0-9]{1,8};?|#x[0-9a-fA-F]{1,7};?|(?:lt|gt|amp|quot);?)/;
// Made on first split: the segmenter loads ICU's break rules, resident pages an idle process skips.
let graphemes: Intl.Segmenter | undefined;

/** Index just past the `>` closing the tag that starts at `from`; quoted attribute values may hold `>`. */
function tagEnd(html: string, from: number): number {
  let quote: string | undefined;
  for (let i = from + 1; i < html.length; i++) {
    const ch = html[i];
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === ">") {
      return i + 1;
    }
  }
  return html.length;
}

function pushText(atoms: HtmlAtom[], text: string): void {
  graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  for (const { segment } of graphemes.segment(text)) atoms.push({ kind: "text", raw: segment });
}

export function toAtoms(html: string): HtmlAtom[] {
  const atoms: HtmlAtom[] = [];
  let textStart = 0;
  let i = 0;
  while (i < html.length) {
    const ch = html[i];
    if (ch !== "<" && ch !== "&") {
      i++;
      continue;
    }
    const entity = ch === "&" ? ENTITY.exec(html.slice(i, i + 12)) : null;
    if (ch === "&" && !entity) {
      i++;
      continue;
    }
    pushText(atoms, html.slice(textStart, i));
    if (entity) {
      atoms.push({ kind: "text", raw: entity[0] });
      i += entity[0].length;
    } else {
      const end = tagEnd(html, i);
      const raw = html.slice(i, end);
      const closing = raw.startsWith("</");
      const name = (/^<\/?([^\s>/]*)/.exec(raw)?.[1] ?? "").toLowerCase();
      atoms.push({ kind: closing ? "close" : "open", name, raw });
      i = end;
    }
    textStart = i;
  }
  pushText(atoms, html.slice(textStart));
  return atoms;
}

export function isLineBreak(atom: HtmlAtom | undefined): boolean {
  return atom?.kind === "text" && (atom.raw === "\n" || atom.raw === "\r\n");
}

export function isBlank(atom: HtmlAtom | undefined): boolean {
  return atom?.kind === "text" && /^\s+$/.test(atom.raw);
}
