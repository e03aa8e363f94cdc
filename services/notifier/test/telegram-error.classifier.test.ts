import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TelegramError } from "telegraf";
import { describe, expect, it } from "vitest";
import { classifyTelegramError, escapeHtml } from "../src/telegram/index.ts";

const apiError = (
  error_code: number,
  description: string,
  parameters?: Record<string, number>,
): TelegramError => new TelegramError({ error_code, description, ...(parameters ? { parameters } : {}) });

describe("classifyTelegramError", () => {
  it("turns 429 with retry_after into a delay in milliseconds", () => {
    expect(
      classifyTelegramError(apiError(429, "Too Many Requests: retry after 7", { retry_after: 7 })),
    ).toEqual({
      kind: "retry-after",
      retryAfterMs: 7_000,
    });
  });

  it.each([
    [400, "Bad Request: chat not found", "chat-not-found"],
    [403, "Forbidden: bot was blocked by the user", "bot-blocked"],
    [403, "Forbidden: bot was kicked from the supergroup chat", "bot-kicked"],
    [403, "Forbidden: user is deactivated", "user-deactivated"],
    [403, "Forbidden: bot can't initiate conversation with a user", "forbidden"],
    [400, 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0', "bad-markup"],
    [400, "Bad Request: message is too long", "message-too-long"],
    [400, "Bad Request: message is not modified: specified new message content …", "message-not-modified"],
    [400, "Bad Request: message to edit not found", "message-not-found"],
    [400, "Bad Request: something new", "bad-request"],
    [401, "Unauthorized", "unauthorized"],
  ])("treats %i %j as permanent (%s)", (code, description, reason) => {
    expect(classifyTelegramError(apiError(code, description))).toEqual({
      kind: "permanent",
      reason,
      description,
    });
  });

  it("treats a group upgraded to a supergroup as permanent", () => {
    const err = apiError(400, "Bad Request: group chat was upgraded to a supergroup chat", {
      migrate_to_chat_id: -100123,
    });
    expect(classifyTelegramError(err)).toMatchObject({ kind: "permanent", reason: "chat-migrated" });
  });

  it("treats 5xx (telegraf reports the HTTP status text) and 429 without retry_after as transient", () => {
    expect(classifyTelegramError(apiError(502, "Bad Gateway"))).toEqual({
      kind: "transient",
      description: "Bad Gateway",
    });
    expect(classifyTelegramError(apiError(429, "Too Many Requests"))).toMatchObject({ kind: "transient" });
  });

  it("reads a raw { ok: false } answer as well as telegraf's error", () => {
    const raw = {
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 2",
      parameters: { retry_after: 2 },
    };
    expect(classifyTelegramError(raw)).toEqual({ kind: "retry-after", retryAfterMs: 2_000 });
  });

  it("retries a refused connection (nothing was sent) but holds a reset or a timeout in doubt", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const refused = await fetch(`http://127.0.0.1:${port}/`).catch((err: unknown) => err);
    expect(classifyTelegramError(refused)).toMatchObject({
      kind: "transient",
      description: expect.stringContaining("ECONNREFUSED"),
    });
    const nodeFetch = Object.assign(
      new Error("request to https://api.telegram.org failed, reason: socket hang up"),
      {
        name: "FetchError",
        code: "ECONNRESET",
        type: "system",
      },
    );
    expect(classifyTelegramError(nodeFetch)).toMatchObject({
      kind: "in-doubt",
      description: expect.stringContaining("ECONNRESET"),
    });
    const nodeFetchRefused = Object.assign(new Error("request failed, reason: connect ECONNREFUSED"), {
      name: "FetchError",
      code: "ECONNREFUSED",
      type: "system",
    });
    expect(classifyTelegramError(nodeFetchRefused)).toMatchObject({ kind: "transient" });
    const undiciClosed = new TypeError("fetch failed", {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    expect(classifyTelegramError(undiciClosed)).toMatchObject({ kind: "in-doubt" });
    const undiciConnectTimeout = new TypeError("fetch failed", {
      cause: Object.assign(new Error("Connect Timeout Error"), { code: "UND_ERR_CONNECT_TIMEOUT" }),
    });
    expect(classifyTelegramError(undiciConnectTimeout)).toMatchObject({ kind: "transient" });
    const aborted = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    expect(classifyTelegramError(aborted)).toMatchObject({ kind: "in-doubt" });
    expect(classifyTelegramError(new Error("something unforeseen"))).toMatchObject({ kind: "in-doubt" });
  });
});

describe("escapeHtml", () => {
  it("escapes the characters Telegram HTML reserves, quotes included", () => {
    expect(escapeHtml(`<b>"Tom" & 'Jerry'</b>`)).toBe(
      "&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;",
    );
  });

  it("leaves other text, Cyrillic and emoji alone", () => {
    expect(escapeHtml("Привет 😀 → ok")).toBe("Привет 😀 → ok");
  });
});
