import { isBlank, isLineBreak, toAtoms, type HtmlAtom } from "./html-atoms.ts";

/**
 * Telegram's limit for one text message: 4096 characters of the text *after* entity parsing
 * (https://core.telegram.org/bots/api#sendmessage), counted by the server in UTF-16 code units.
 * We measure the HTML source in UTF-16 code units instead: tags vanish and entities shrink when
 * parsed, so a part whose source fits is guaranteed to fit, whatever mix of emoji, Cyrillic and
 * markup it holds. The price is an occasional extra split of markup-heavy text.
 */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** Where a part may end, best first. */
type BoundaryLevel = "paragraph" | "line" | "word" | "any";
const LEVELS: readonly BoundaryLevel[] = ["paragraph", "line", "word", "any"];

/** A boundary below this share of the largest possible part is not worth the extra message. */
const MIN_FILL = 0.5;

interface OpenTag {
  name: string;
  raw: string;
}

interface Cut {
  /** The part is atoms[start, end). */
  end: number;
  /** Where the next part starts (separators between parts are dropped). */
  next: number;
  /** Tags still open at `end`: closed at the end of this part, reopened at the next. */
  open: OpenTag[];
  size: number;
}

const closers = (open: OpenTag[]): string =>
  open
    .slice()
    .reverse()
    .map((tag) => `</${tag.name}>`)
    .join("");

function levelAt(atoms: HtmlAtom[], i: number): BoundaryLevel {
  if (isLineBreak(atoms[i])) return isLineBreak(atoms[i + 1]) ? "paragraph" : "line";
  return isBlank(atoms[i]) ? "word" : "any";
}

function skipBlanks(atoms: HtmlAtom[], from: number): number {
  let i = from;
  while (isBlank(atoms[i])) i++;
  return i;
}

function applyTag(open: OpenTag[], atom: HtmlAtom): OpenTag[] {
  if (atom.kind === "open") return [...open, { name: atom.name, raw: atom.raw }];
  if (atom.kind === "close") {
    const at = open.map((t) => t.name).lastIndexOf(atom.name);
    return at === -1 ? open : [...open.slice(0, at), ...open.slice(at + 1)];
  }
  return open;
}

/**
 * Scans from `start` while the part still fits and returns the best place to end it: the last
 * paragraph break, else line break, else space, else any atom boundary — a better kind only if
 * the part would still be at least half as long as the longest possible one.
 */
function chooseCut(atoms: HtmlAtom[], start: number, reopened: OpenTag[], limit: number): Cut | "rest" {
  let size = reopened.reduce((sum, tag) => sum + tag.raw.length, 0);
  let open = reopened;
  let visible = false;
  const best = new Map<BoundaryLevel, Cut>();
  for (let i = start; ; i++) {
    const cost = size + closers(open).length;
    if (cost > limit) break;
    if (i === atoms.length) return "rest";
    if (i > start && visible) {
      const level = levelAt(atoms, i);
      const cut: Cut = { end: i, next: level === "any" ? i : skipBlanks(atoms, i), open, size: cost };
      best.set(level, cut);
      if (level !== "any") best.set("any", cut);
    }
    const atom = atoms[i] as HtmlAtom;
    size += atom.raw.length;
    open = applyTag(open, atom);
    if (atom.kind === "text" && !isBlank(atom)) visible = true;
  }
  const longest = best.get("any");
  if (!longest) {
    throw new RangeError(`splitMessage: a limit of ${limit} cannot hold the open tags and one character`);
  }
  for (const level of LEVELS) {
    const cut = best.get(level);
    if (cut && cut.size >= longest.size * MIN_FILL) return cut;
  }
  return longest;
}

function hasVisibleText(atoms: HtmlAtom[], from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const atom = atoms[i] as HtmlAtom;
    if (atom.kind === "text" && !isBlank(atom)) return true;
  }
  return false;
}

/**
 * Splits Telegram HTML into messages of at most `limit` UTF-16 code units each, preferring
 * paragraph, then line, then word boundaries. It never breaks a tag, an entity, a surrogate pair
 * or a grapheme cluster, and closes the tags open at a split and reopens them in the next part,
 * so every part is valid HTML on its own. Separators at a split are dropped; parts without visible
 * text are left out. Text that fits is returned unchanged as the only part.
 */
export function splitMessage(html: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  if (html.length <= limit) return [html];
  const atoms = toAtoms(html);
  const parts: string[] = [];
  let start = 0;
  let open: OpenTag[] = [];
  while (start < atoms.length) {
    const cut = chooseCut(atoms, start, open, limit);
    const end = cut === "rest" ? atoms.length : cut.end;
    const endOpen = cut === "rest" ? [] : cut.open;
    if (hasVisibleText(atoms, start, end)) {
      const body = atoms
        .slice(start, end)
        .map((atom) => atom.raw)
        .join("");
      parts.push(open.map((tag) => tag.raw).join("") + body + closers(endOpen));
    }
    if (cut === "rest") break;
    start = cut.next;
    open = cut.open;
  }
  return parts;
}
