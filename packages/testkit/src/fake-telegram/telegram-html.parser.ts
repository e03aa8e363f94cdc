/**
 * Telegram's HTML parse mode, reimplemented from the behaviour of the Bot API server (TDLib's
 * `parse_html`): the same tag set, the same leniency (a stray `&` or `>` is kept as text) and the
 * same error texts, so a message the fake accepts is one Telegram accepts and vice versa.
 * Offsets and lengths of entities are in UTF-16 code units, as in the Bot API.
 */

export interface MessageEntity {
  type:
    | "bold"
    | "italic"
    | "underline"
    | "strikethrough"
    | "spoiler"
    | "code"
    | "pre"
    | "text_link"
    | "custom_emoji"
    | "blockquote"
    | "expandable_blockquote"
    | "bot_command";
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
}

export type HtmlParseResult =
  | { ok: true; text: string; entities: MessageEntity[] }
  /** `error` is the part after "Bad Request: can't parse entities: ". */
  | { ok: false; error: string };

const SUPPORTED_TAGS = new Set([
  "a",
  "b",
  "strong",
  "i",
  "em",
  "s",
  "strike",
  "del",
  "u",
  "ins",
  "tg-spoiler",
  "tg-emoji",
  "span",
  "pre",
  "code",
  "blockquote",
]);

const SIMPLE_ENTITY: Record<string, MessageEntity["type"]> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
};

const NAMED_ENTITIES: Record<string, number> = { lt: 0x3c, gt: 0x3e, amp: 0x26, quot: 0x22 };

interface OpenTag {
  name: string;
  argument: string;
  expandable: boolean;
  offset: number;
  textStart: number;
}

class HtmlSyntaxError extends Error {}

/** Like TDLib's `is_space`; the end of input counts as a space there (a C string's NUL). */
function isSpace(ch: string | undefined): boolean {
  return ch === undefined || ch === " " || ch === "\t" || ch === "\r" || ch === "\n" || ch === "\v";
}

function byteOffset(html: string, index: number): number {
  return Buffer.byteLength(html.slice(0, index), "utf8");
}

/** Decodes `&lt;`, `&#60;`, `&#x3c;` (the `;` is optional). Undefined when it is no entity. */
function decodeEntity(html: string, at: number): { code: number; end: number } | undefined {
  let end = at + 1;
  let code = 0;
  if (html[end] === "#") {
    end++;
    const hex = html[end] === "x";
    if (hex) end++;
    const digit = hex ? /[0-9a-fA-F]/ : /[0-9]/;
    while (end < html.length && digit.test(html[end] ?? "")) {
      code = code * (hex ? 16 : 10) + Number.parseInt(html[end] ?? "0", 16);
      end++;
    }
    if (code === 0 || code >= 0x10ffff || end - at >= 10) return undefined;
  } else {
    while (end < html.length && /[a-zA-Z]/.test(html[end] ?? "")) end++;
    const named = NAMED_ENTITIES[html.slice(at + 1, end)];
    if (named === undefined) return undefined;
    code = named;
  }
  return { code, end: html[end] === ";" ? end + 1 : end };
}

/** Parses Telegram HTML into plain text and entities, or returns the API's error text. */
export function parseTelegramHtml(html: string): HtmlParseResult {
  try {
    return { ok: true, ...parse(html) };
  } catch (err) {
    if (err instanceof HtmlSyntaxError) return { ok: false, error: err.message };
    throw err;
  }
}

function parse(html: string): { text: string; entities: MessageEntity[] } {
  let text = "";
  const entities: MessageEntity[] = [];
  const open: OpenTag[] = [];
  const fail = (message: string): never => {
    throw new HtmlSyntaxError(message);
  };
  let i = 0;
  while (i < html.length) {
    const ch = html[i];
    if (ch === "&") {
      const decoded = decodeEntity(html, i);
      if (decoded) {
        text += String.fromCodePoint(decoded.code);
        i = decoded.end;
        continue;
      }
    }
    if (ch !== "<") {
      text += ch;
      i++;
      continue;
    }
    const begin = i++;
    if (html[i] !== "/") {
      while (!isSpace(html[i]) && html[i] !== ">") i++;
      if (i >= html.length) fail(`Unclosed start tag at byte offset ${byteOffset(html, begin)}`);
      const name = html.slice(begin + 1, i).toLowerCase();
      if (!SUPPORTED_TAGS.has(name)) {
        fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(html, begin)}`);
      }
      const tag: OpenTag = {
        name,
        argument: "",
        expandable: false,
        offset: text.length,
        textStart: text.length,
      };
      i = parseAttributes(html, i, begin, tag, fail);
      i++; // the '>'
      if (name === "span" && tag.argument !== "spoiler") {
        fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(html, begin)}`);
      }
      open.push(tag);
      continue;
    }
    if (open.length === 0) fail(`Unexpected end tag at byte offset ${byteOffset(html, begin)}`);
    while (!isSpace(html[i]) && html[i] !== ">") i++;
    const endName = html.slice(begin + 2, i).toLowerCase();
    while (i < html.length && isSpace(html[i])) i++;
    if (html[i] !== ">") fail(`Unclosed end tag at byte offset ${byteOffset(html, begin)}`);
    i++;
    const tag = open.pop() as OpenTag;
    if (endName !== "" && endName !== tag.name) {
      fail(
        `Unmatched end tag at byte offset ${byteOffset(html, begin)}, expected "</${tag.name}>", found "</${endName}>"`,
      );
    }
    const entity = closeEntity(tag, text, entities, fail);
    if (entity) entities.push(entity);
  }
  const unclosed = open.at(-1);
  if (unclosed) fail(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)) {
    fail(
      "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units",
    );
  }
  // A language is only meaningful on a pre block; a standalone code tag drops it.
  for (const entity of entities) if (entity.type === "code") delete entity.language;
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text, entities };
}

/** Reads attributes up to the closing `>` of a start tag; returns the index of that `>`. */
function parseAttributes(
  html: string,
  from: number,
  begin: number,
  tag: OpenTag,
  fail: (m: string) => never,
): number {
  let i = from;
  const at = () => byteOffset(html, begin);
  while (html[i] !== ">") {
    while (i < html.length && isSpace(html[i])) i++;
    if (i >= html.length) fail(`Unclosed start tag at byte offset ${at()}`);
    if (html[i] === ">") break;
    const nameStart = i;
    while (!isSpace(html[i]) && html[i] !== "=" && html[i] !== ">") i++;
    const attribute = html.slice(nameStart, i);
    if (attribute === "") fail(`Empty attribute name in the tag "${tag.name}" at byte offset ${at()}`);
    while (i < html.length && isSpace(html[i])) i++;
    if (html[i] !== "=") {
      // `<blockquote expandable>` is the one attribute the API accepts without a value.
      if (tag.name === "blockquote" && attribute === "expandable") {
        tag.expandable = true;
        continue;
      }
      fail(
        `Expected equal sign in declaration of an attribute of the tag "${tag.name}" at byte offset ${at()}`,
      );
    }
    i++;
    while (i < html.length && isSpace(html[i])) i++;
    if (i >= html.length) fail(`Unclosed start tag "${tag.name}" at byte offset ${at()}`);
    let value = "";
    const quote = html[i];
    if (quote !== "'" && quote !== '"') {
      const tokenStart = i;
      while (/[a-zA-Z0-9.-]/.test(html[i] ?? "")) i++;
      value = html.slice(tokenStart, i).toLowerCase();
      if (!isSpace(html[i]) && html[i] !== ">") {
        fail(`Unexpected end of name token at byte offset ${byteOffset(html, tokenStart)}`);
      }
    } else {
      i++;
      while (i < html.length && html[i] !== quote) {
        const decoded = html[i] === "&" ? decodeEntity(html, i) : undefined;
        if (decoded) {
          value += String.fromCodePoint(decoded.code);
          i = decoded.end;
        } else {
          value += html[i];
          i++;
        }
      }
      if (html[i] === quote) i++;
    }
    if (i >= html.length) fail(`Unclosed start tag at byte offset ${at()}`);
    if (tag.name === "a" && attribute === "href") tag.argument = value;
    else if (tag.name === "code" && attribute === "class" && value.startsWith("language-"))
      tag.argument = value.slice(9);
    else if (tag.name === "span" && attribute === "class" && value.startsWith("tg-"))
      tag.argument = value.slice(3);
    else if (tag.name === "tg-emoji" && attribute === "emoji-id") tag.argument = value;
  }
  return i;
}

function closeEntity(
  tag: OpenTag,
  text: string,
  entities: MessageEntity[],
  fail: (m: string) => never,
): MessageEntity | undefined {
  const length = text.length - tag.offset;
  if (length <= 0) return undefined;
  const base = { offset: tag.offset, length };
  const simple = SIMPLE_ENTITY[tag.name];
  if (simple) return { type: simple, ...base };
  const previous = entities.at(-1);
  const sameSpan = previous && previous.offset === tag.offset && previous.length === length;
  switch (tag.name) {
    case "span":
      return { type: "spoiler", ...base };
    case "tg-emoji":
      if (!/^[1-9][0-9]*$/.test(tag.argument)) fail("Invalid custom emoji identifier specified");
      return { type: "custom_emoji", ...base, custom_emoji_id: tag.argument };
    case "a":
      return { type: "text_link", ...base, url: tag.argument || text.slice(tag.textStart) };
    case "blockquote":
      return { type: tag.expandable ? "expandable_blockquote" : "blockquote", ...base };
    case "pre":
      // `<pre><code class="language-x">` is one pre entity with a language.
      if (sameSpan && previous.type === "code" && previous.language) {
        entities.pop();
        return { type: "pre", ...base, language: previous.language };
      }
      return { type: "pre", ...base };
    default: // code
      if (sameSpan && previous.type === "pre" && tag.argument) {
        previous.language = tag.argument;
        return undefined;
      }
      return tag.argument ? { type: "code", ...base, language: tag.argument } : { type: "code", ...base };
  }
}
