import { parseTelegramHtml, type MessageEntity } from "@ratatoskr/testkit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMessage } from "../src/telegram/index.ts";

const graphemes = (text: string): string[] =>
  [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(text)].map((s) => s.segment);

function parsed(html: string): { text: string; entities: MessageEntity[] } {
  const result = parseTelegramHtml(html);
  if (!result.ok) throw new Error(`invalid Telegram HTML (${result.error}): ${html}`);
  return result;
}

/** Every visible non-space UTF-16 unit with the formatting that covers it, in order. */
function styledUnits(html: string): string[] {
  const { text, entities } = parsed(html);
  const units: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (/\s/.test(text[i] ?? "")) continue;
    const styles = entities
      .filter((e) => e.offset <= i && i < e.offset + e.length)
      .map((e) => `${e.type}${e.url ?? ""}${e.language ?? ""}`)
      .sort();
    units.push(`${text[i]}|${styles.join(",")}`);
  }
  return units;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("splitMessage", () => {
  it("returns a text that fits unchanged", () => {
    expect(splitMessage("<b>short</b> & sweet", 4096)).toEqual(["<b>short</b> & sweet"]);
  });

  it("prefers a paragraph break, then a line break, then a space", () => {
    const para = `${"a".repeat(30)}\n${"b".repeat(20)}\n\n${"c".repeat(30)}`;
    expect(splitMessage(para, 60)).toEqual([`${"a".repeat(30)}\n${"b".repeat(20)}`, "c".repeat(30)]);
    const lines = `${"a".repeat(30)} ${"b".repeat(20)}\n${"c".repeat(30)}`;
    expect(splitMessage(lines, 60)).toEqual([`${"a".repeat(30)} ${"b".repeat(20)}`, "c".repeat(30)]);
    const words = `${"a".repeat(30)} ${"b".repeat(20)} ${"c".repeat(30)}`;
    expect(splitMessage(words, 60)).toEqual([`${"a".repeat(30)} ${"b".repeat(20)}`, "c".repeat(30)]);
  });

  it("does not take an early paragraph break that would leave a tiny part", () => {
    const text = `intro\n\n${"word ".repeat(30).trim()}`;
    const parts = splitMessage(text, 100);
    expect(parts[0]?.startsWith("intro\n\nword")).toBe(true);
    expect(parts[0]?.length).toBeGreaterThan(50);
  });

  it("cuts a long word at a grapheme boundary, keeping emoji sequences whole", () => {
    const word = "👩‍💻🇺🇦ё".repeat(40);
    for (const limit of [47, 48, 49, 50, 51]) {
      const parts = splitMessage(word, limit);
      expect(parts.join("")).toBe(word);
      for (const part of parts) {
        expect(part.length).toBeLessThanOrEqual(limit);
        expect(graphemes(part).every((g) => ["👩‍💻", "🇺🇦", "ё"].includes(g))).toBe(true);
      }
    }
  });

  it("closes tags at a split and reopens them, attributes included, in the next part", () => {
    const html = `<b>bold <a href="https://e.test/?a=1&amp;b=2">${"link ".repeat(20)}</a> tail</b>`;
    const parts = splitMessage(html, 80);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]).toMatch(/^<b>bold <a href="https:\/\/e\.test\/\?a=1&amp;b=2">link .*<\/a><\/b>$/);
    expect(parts[1]).toMatch(/^<b><a href="https:\/\/e\.test\/\?a=1&amp;b=2">link/);
    expect(parts.flatMap(styledUnits)).toEqual(styledUnits(html));
  });

  it("never cuts inside an entity", () => {
    const html = "&amp;&lt;&#128512;".repeat(30);
    const parts = splitMessage(html, 25);
    expect(parts.join("")).toBe(html);
    for (const part of parts) expect(part).toMatch(/^(&amp;|&lt;|&#128512;)+$/);
  });

  it("splits 10 000 Cyrillic characters under Telegram's default limit", () => {
    const text = "Съешь же ещё этих мягких французских булок. ".repeat(230);
    const parts = splitMessage(text);
    expect(parts.length).toBe(3);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096);
    expect(parts.join(" ").trim()).toBe(text.trim());
  });

  it("refuses a limit too small for the open tags", () => {
    expect(() =>
      splitMessage(`<pre><code class="language-typescript">${"x".repeat(50)}</code></pre>`, 40),
    ).toThrow(RangeError);
  });

  describe("properties over generated Telegram HTML", () => {
    const word = fc.constantFrom(
      "привет",
      "ёжик",
      "hello",
      "😀",
      "👩‍💻",
      "🇺🇦",
      "a&amp;b",
      "&lt;x&gt;",
      "&#1071;",
      "x".repeat(45),
      "длинноесловобезпробелов".repeat(3),
      "👩‍💻🇺🇦".repeat(25),
    );
    const separator = fc.constantFrom(" ", " ", " ", "\n", "\n\n");
    const text = fc
      .array(fc.tuple(word, separator), { minLength: 1, maxLength: 12 })
      .map((pairs) => pairs.map(([w, s]) => w + s).join(""));
    const TAGS: Array<[string, string]> = [
      ["<b>", "</b>"],
      ["<i>", "</i>"],
      ["<u>", "</u>"],
      ["<s>", "</s>"],
      ["<code>", "</code>"],
      ['<a href="https://e.test/?a=1&amp;b=2">', "</a>"],
      ["<tg-spoiler>", "</tg-spoiler>"],
      ["<blockquote>", "</blockquote>"],
    ];
    // A pre block holds plain text only (Bot API: pre and code contain no other entities); a pre
    // inside a pre would merge with it the way Telegram's parser merges <pre><code>.
    const preBlock = text.map((inner) => `<pre><code class="language-ts">${inner}</code></pre>`);
    const { node } = fc.letrec<{ node: string; tagged: string; sequence: string }>((tie) => ({
      node: fc.oneof({ maxDepth: 4, depthIdentifier: "html" }, text, preBlock, tie("tagged"), tie("sequence")),
      tagged: fc
        .tuple(fc.constantFrom(...TAGS), tie("node"))
        .map(([[open, close], inner]) => open + inner + close),
      sequence: fc
        .array(tie("node"), { minLength: 1, maxLength: 4, depthIdentifier: "html" })
        .map((xs) => xs.join("")),
    }));
    const input = fc.record({ html: node, limit: fc.integer({ min: 300, max: 900 }) });

    it("keeps every part valid, within the limit and free of broken characters", () => {
      fc.assert(
        fc.property(input, ({ html, limit }) => {
          for (const part of splitMessage(html, limit)) {
            expect(part.length).toBeLessThanOrEqual(limit);
            expect(LONE_SURROGATE.test(part)).toBe(false);
            expect(parsed(part).text.trim()).not.toBe("");
          }
        }),
        { numRuns: 300 },
      );
    });

    it("loses no visible character and no formatting, and invents no grapheme", () => {
      fc.assert(
        fc.property(input, ({ html, limit }) => {
          const parts = splitMessage(html, limit);
          expect(parts.flatMap(styledUnits)).toEqual(styledUnits(html));
          const known = new Set(graphemes(parsed(html).text));
          for (const part of parts)
            for (const g of graphemes(parsed(part).text)) expect(known.has(g)).toBe(true);
        }),
        { numRuns: 300 },
      );
    });
  });
});
