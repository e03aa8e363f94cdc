import { describe, expect, it } from "vitest";
import { parseTelegramHtml } from "../src/index.ts";

describe("parseTelegramHtml", () => {
  it("turns nested tags into entities with UTF-16 offsets", () => {
    expect(parseTelegramHtml("😀 <b>bold <i>both</i></b>")).toEqual({
      ok: true,
      text: "😀 bold both",
      entities: [
        { type: "bold", offset: 3, length: 9 },
        { type: "italic", offset: 8, length: 4 },
      ],
    });
  });

  it('makes one pre entity with a language from <pre><code class="language-x">', () => {
    const parsed = parseTelegramHtml(
      '<pre><code class="language-ts">let a = 1;</code></pre> and <code class="language-js">x</code>',
    );
    expect(parsed).toEqual({
      ok: true,
      text: "let a = 1; and x",
      entities: [
        { type: "pre", offset: 0, length: 10, language: "ts" },
        { type: "code", offset: 15, length: 1 },
      ],
    });
  });

  it("decodes the four named entities and numeric ones, and keeps a stray & or > as text like the API", () => {
    const parsed = parseTelegramHtml("&lt;a&gt; &amp; &quot; &#128512; &#x44F; AT&T 2 > 1 &nbsp;");
    expect(parsed).toMatchObject({ ok: true, text: '<a> & " 😀 я AT&T 2 > 1 &nbsp;' });
  });

  it("supports spoilers, custom emoji, links and expandable quotes", () => {
    const parsed = parseTelegramHtml(
      '<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>' +
        '<a href="https://e.test">l</a><blockquote expandable>q</blockquote>',
    );
    expect(parsed.ok && parsed.entities.map((e) => e.type)).toEqual([
      "spoiler",
      "spoiler",
      "custom_emoji",
      "text_link",
      "expandable_blockquote",
    ]);
  });

  it.each([
    ["<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'],
    ['<tg-emoji emoji-id="x">👍</tg-emoji>', "Invalid custom emoji identifier specified"],
    ["<b x>y</b>", 'Expected equal sign in declaration of an attribute of the tag "b" at byte offset 0'],
    ["<a href=ok/>x</a>", "Unexpected end of name token at byte offset 8"],
    ["<b>x</b >", ""],
    ["ё<p>", 'Unsupported start tag "p" at byte offset 2'],
    [
      "&#xD800;",
      "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units",
    ],
  ])("reports %j as %j (byte offsets in UTF-8)", (html, error) => {
    const parsed = parseTelegramHtml(html);
    if (error === "") expect(parsed.ok).toBe(true);
    else expect(parsed).toEqual({ ok: false, error });
  });
});
