/**
 * Bidirectional controls make text display in another order than it is stored ("Trojan Source"):
 * `access = "user\u202E \u2066// admin\u2069 \u2066"` shows a reader one thing and a model
 * another. This resolves the explicit controls to the order a reader sees and drops them:
 * a right-to-left override (RLO … PDF, or to the end of the line) shows its characters reversed,
 * so they are reversed here (by grapheme, keeping accents on their letters), a nested isolate or
 * embedding moving as one piece; embeddings, isolates and marks do not reorder left-to-right
 * letters themselves and are dropped. Text in right-to-left scripts
 * is left in storage order (how it is shaped is beyond this): callers add a note whenever
 * `controls` is not 0.
 */

const RLO = 0x202e;
const LRO = 0x202d;
const RLE = 0x202b;
const LRE = 0x202a;
const PDF = 0x202c;
const LRI = 0x2066;
const RLI = 0x2067;
const FSI = 0x2068;
const PDI = 0x2069;
const MARKS = new Set([0x200e, 0x200f, 0x061c]);
/** The bidi algorithm's own limit; deeper openers are ignored (and nesting cost stays linear). */
const MAX_DEPTH = 125;

/** Graphemes, and whole nested runs (an isolate or embedding moves as one piece inside an override). */
type Frame = { kind: "override-rtl" | "override-ltr" | "embedding" | "isolate"; units: string[] };

/**
 * A letter with its combining marks (and emoji joined by ZWJ): enough to reverse text without
 * tearing accents off. Not Intl.Segmenter, whose iteration is quadratic on long lines in Node 20.
 */
const CLUSTER = /(?:\P{M}\p{M}*)(?:\u200d\P{M}\p{M}*)*|\p{M}+/gu;

function resolved(frame: Frame): string {
  return (frame.kind === "override-rtl" ? [...frame.units].reverse() : frame.units).join("");
}

function close(stack: Frame[]): void {
  const frame = stack.pop();
  const parent = stack.at(-1);
  if (frame && parent) parent.units.push(resolved(frame));
}

const ANY_CONTROL = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

function resolveLine(line: string): { text: string; controls: number } {
  if (!ANY_CONTROL.test(line)) return { text: line, controls: 0 };
  const stack: Frame[] = [{ kind: "embedding", units: [] }];
  let controls = 0;
  for (const char of line.match(CLUSTER) ?? []) {
    const cp = char.codePointAt(0) ?? 0;
    if ((cp === RLO || cp === LRO || cp === RLE || cp === LRE || cp === LRI || cp === RLI || cp === FSI) && stack.length > MAX_DEPTH) {
      controls++;
    } else if (cp === RLO || cp === LRO || cp === RLE || cp === LRE) {
      controls++;
      stack.push({ kind: cp === RLO ? "override-rtl" : cp === LRO ? "override-ltr" : "embedding", units: [] });
    } else if (cp === LRI || cp === RLI || cp === FSI) {
      controls++;
      stack.push({ kind: "isolate", units: [] });
    } else if (cp === PDF) {
      controls++;
      // PDF closes the innermost override or embedding, never past an isolate.
      if (stack.length > 1 && stack.at(-1)?.kind !== "isolate") close(stack);
    } else if (cp === PDI) {
      controls++;
      const isolate = stack.findLastIndex((f) => f.kind === "isolate");
      if (isolate > 0) while (stack.length > isolate) close(stack);
    } else if (MARKS.has(cp)) {
      controls++;
    } else {
      (stack.at(-1) as Frame).units.push(char);
    }
  }
  while (stack.length > 1) close(stack); // every control ends with its paragraph
  return { text: stack[0] ? resolved(stack[0]) : "", controls };
}

/** The text in display order without its bidi controls, and how many controls there were. */
export function displayOrder(text: string): { text: string; controls: number } {
  let controls = 0;
  const lines = text.split("\n").map((line) => {
    const resolved = resolveLine(line);
    controls += resolved.controls;
    return resolved.text;
  });
  return { text: lines.join("\n"), controls };
}
