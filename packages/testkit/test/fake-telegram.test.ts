import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeTelegram, type Message, type Update } from "../src/index.ts";

interface ApiAnswer {
  status: number;
  body: {
    ok: boolean;
    result?: unknown;
    error_code?: number;
    description?: string;
    parameters?: { retry_after?: number };
  };
}

/** One raw Bot API call: JSON POST by default, or form / query-string encodings. */
async function callApi(
  fake: FakeTelegram,
  method: string,
  params: Record<string, unknown> = {},
  encoding: "json" | "form" | "query" = "json",
): Promise<ApiAnswer> {
  const url = new URL(`/bot${fake.token}/${method}`, fake.url);
  const flat = Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : String(v)]),
  );
  let init: RequestInit = {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
  };
  if (encoding === "form") {
    init = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(flat).toString(),
    };
  } else if (encoding === "query") {
    for (const [k, v] of Object.entries(flat)) url.searchParams.set(k, v);
    init = { method: "GET" };
  }
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as ApiAnswer["body"] };
}

/** Settles-or-not probe without sleeping: a round trip to the server gives a pending poll every chance to answer. */
async function isSettled(fake: FakeTelegram, promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await callApi(fake, "getMe");
  await callApi(fake, "getMe");
  return settled;
}

const CHAT = 4242;
let fake: FakeTelegram;

beforeEach(async () => {
  fake = await new FakeTelegram().start();
});
afterEach(async () => {
  await fake.stop();
});

describe("Bot API envelope", () => {
  it("answers getMe over GET without a body, with the bot id taken from the token", async () => {
    const answer = await callApi(fake, "getMe", {}, "query");
    expect(answer).toEqual({
      status: 200,
      body: {
        ok: true,
        result: expect.objectContaining({ id: 123456, is_bot: true, username: "ratatoskr_test_bot" }),
      },
    });
  });

  it("rejects a wrong token with 401 and an unknown method with 404, like api.telegram.org", async () => {
    const wrongToken = await fetch(new URL("/bot999:nope/getMe", fake.url));
    expect(wrongToken.status).toBe(401);
    expect(await wrongToken.json()).toEqual({ ok: false, error_code: 401, description: "Unauthorized" });
    const unknown = await callApi(fake, "sendPigeon");
    expect(unknown).toEqual({ status: 404, body: { ok: false, error_code: 404, description: "Not Found" } });
  });

  it("treats method names case-insensitively and records every call with its params", async () => {
    fake.addChat(CHAT);
    await callApi(fake, "SENDMESSAGE", { chat_id: CHAT, text: "hi" });
    expect(fake.requests("sendMessage")).toEqual([
      expect.objectContaining({ method: "sendMessage", via: "POST", params: { chat_id: CHAT, text: "hi" } }),
    ]);
  });
});

describe("sendMessage", () => {
  it("accepts form bodies and query strings, with reply_markup as a JSON string", async () => {
    fake.addChat(CHAT);
    const keyboard = { inline_keyboard: [[{ text: "OK", callback_data: "ok" }]] };
    const form = await callApi(
      fake,
      "sendMessage",
      { chat_id: CHAT, text: "form", reply_markup: keyboard },
      "form",
    );
    const query = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "query" }, "query");
    expect(form.status).toBe(200);
    expect(query.status).toBe(200);
    expect(fake.sent(CHAT).map((r) => [r.text, r.replyMarkup])).toEqual([
      ["form", keyboard],
      ["query", undefined],
    ]);
  });

  it("returns the Message with plain text and entities for HTML and records the HTML source", async () => {
    fake.addChat(CHAT);
    const answer = await callApi(fake, "sendMessage", {
      chat_id: CHAT,
      text: 'Задача <b>#7</b> &amp; 😀 <a href="https://x.test/?a=1&amp;b=2">PR</a>',
      parse_mode: "HTML",
    });
    const message = answer.body.result as Message;
    expect(message.text).toBe("Задача #7 & 😀 PR");
    expect(message.entities).toEqual([
      { type: "bold", offset: 7, length: 2 },
      { type: "text_link", offset: 15, length: 2, url: "https://x.test/?a=1&b=2" },
    ]);
    expect(fake.sent(CHAT)[0]).toMatchObject({
      text: expect.stringContaining("<b>#7</b>"),
      parseMode: "HTML",
    });
  });

  it.each([
    ["a <foo> b", `Unsupported start tag "foo" at byte offset 2`],
    ["x < y", `Unsupported start tag "" at byte offset 2`],
    ["<b>open", `Can't find end tag corresponding to start tag "b"`],
    ["<b>x</i>", `Unmatched end tag at byte offset 4, expected "</b>", found "</i>"`],
    ["x</b>", "Unexpected end tag at byte offset 1"],
    ["я <b", "Unclosed start tag at byte offset 3"],
  ])("rejects malformed HTML %j with the real 400 text", async (text, detail) => {
    fake.addChat(CHAT);
    const answer = await callApi(fake, "sendMessage", { chat_id: CHAT, text, parse_mode: "HTML" });
    expect(answer).toEqual({
      status: 400,
      body: { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${detail}` },
    });
    expect(fake.sent(CHAT)).toEqual([]);
  });

  it("counts the 4096 limit after entity parsing, in UTF-16 units", async () => {
    fake.addChat(CHAT);
    const exact = await callApi(fake, "sendMessage", {
      chat_id: CHAT,
      text: `<b>${"я".repeat(4096)}</b>`,
      parse_mode: "HTML",
    });
    expect(exact.status).toBe(200);
    const over = await callApi(fake, "sendMessage", { chat_id: CHAT, text: `${"😀".repeat(2048)}a` });
    expect(over.body).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: message is too long",
    });
    const empty = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "<b> </b>", parse_mode: "HTML" });
    expect(empty.body.description).toBe("Bad Request: message text is empty");
  });

  it("answers chat not found for a chat nobody opened, and 403 for blocked, kicked and deactivated", async () => {
    expect((await callApi(fake, "sendMessage", { chat_id: 1, text: "x" })).body).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: chat not found",
    });
    const texts: string[] = [];
    for (const how of ["blocked", "kicked", "deactivated"] as const) {
      fake.blockBot(CHAT, how);
      const answer = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "x" });
      expect(answer.status).toBe(403);
      texts.push(answer.body.description ?? "");
    }
    expect(texts).toEqual([
      "Forbidden: bot was blocked by the user",
      "Forbidden: bot was kicked from the group chat",
      "Forbidden: user is deactivated",
    ]);
    fake.unblockBot(CHAT);
    expect((await callApi(fake, "sendMessage", { chat_id: CHAT, text: "x" })).status).toBe(200);
  });

  it("rejects callback_data over 64 bytes with BUTTON_DATA_INVALID", async () => {
    fake.addChat(CHAT);
    const markup = { inline_keyboard: [[{ text: "x", callback_data: "я".repeat(33) }]] };
    const answer = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "x", reply_markup: markup });
    expect(answer.body.description).toBe("Bad Request: BUTTON_DATA_INVALID");
  });
});

describe("editing and other message methods", () => {
  async function sendWithButton(): Promise<number> {
    fake.addChat(CHAT);
    const markup = { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] };
    const answer = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "draft", reply_markup: markup });
    return (answer.body.result as Message).message_id;
  }

  it("edits text, records the edit and drops the keyboard when reply_markup is omitted", async () => {
    const id = await sendWithButton();
    const answer = await callApi(fake, "editMessageText", {
      chat_id: CHAT,
      message_id: id,
      text: "<i>done</i>",
      parse_mode: "HTML",
    });
    expect(answer.status).toBe(200);
    expect(fake.sent(CHAT).map((r) => [r.kind, r.plainText, r.replyMarkup])).toEqual([
      ["sent", "draft", { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] }],
      ["edited", "done", undefined],
    ]);
    expect(fake.message(CHAT, id)?.text).toBe("<i>done</i>");
  });

  it("answers 'message is not modified' for an identical edit and 'not found' for a missing message", async () => {
    const id = await sendWithButton();
    const markup = { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] };
    const same = await callApi(fake, "editMessageText", {
      chat_id: CHAT,
      message_id: id,
      text: "draft",
      reply_markup: markup,
    });
    expect(same.body.description).toMatch(/^Bad Request: message is not modified/);
    const missing = await callApi(fake, "editMessageText", { chat_id: CHAT, message_id: 999, text: "x" });
    expect(missing.body.description).toBe("Bad Request: message to edit not found");
  });

  it("edits only the keyboard, deletes messages and validates chat actions", async () => {
    const id = await sendWithButton();
    expect((await callApi(fake, "editMessageReplyMarkup", { chat_id: CHAT, message_id: id })).status).toBe(
      200,
    );
    expect(fake.message(CHAT, id)?.replyMarkup).toBeUndefined();
    expect((await callApi(fake, "deleteMessage", { chat_id: CHAT, message_id: id })).body).toEqual({
      ok: true,
      result: true,
    });
    expect(fake.message(CHAT, id)?.deleted).toBe(true);
    const again = await callApi(fake, "deleteMessage", { chat_id: CHAT, message_id: id });
    expect(again.body.description).toBe("Bad Request: message to delete not found");
    expect((await callApi(fake, "sendChatAction", { chat_id: CHAT, action: "typing" })).status).toBe(200);
    expect((await callApi(fake, "sendChatAction", { chat_id: CHAT, action: "dancing" })).status).toBe(400);
  });

  it("stores bot commands and rejects invalid command names", async () => {
    const commands = [{ command: "status", description: "Task status" }];
    expect((await callApi(fake, "setMyCommands", { commands }, "form")).status).toBe(200);
    expect(fake.commands()).toEqual(commands);
    const bad = await callApi(fake, "setMyCommands", {
      commands: [{ command: "Bad-Name", description: "x" }],
    });
    expect(bad.body.description).toBe("Bad Request: BOT_COMMAND_INVALID");
  });
});

describe("the person's side", () => {
  it("marks /commands with bot_command entities at UTF-16 offsets", () => {
    expect(fake.sendText(CHAT, "/status 12").entities).toEqual([
      { type: "bot_command", offset: 0, length: 7 },
    ]);
    expect(fake.sendText(CHAT, "😀 then /help@ratatoskr_test_bot").entities).toEqual([
      { type: "bot_command", offset: 8, length: 24 },
    ]);
    expect(fake.sendText(CHAT, "no command a/b").entities).toBeUndefined();
  });

  it("presses a button as a callback_query and accepts exactly one answer", async () => {
    fake.addChat(CHAT);
    const markup = { inline_keyboard: [[{ text: "Approve", callback_data: "approve:7" }]] };
    const sent = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "draft", reply_markup: markup });
    const messageId = (sent.body.result as Message).message_id;
    expect(() => fake.pressButton(CHAT, messageId, "nope")).toThrow(/has no button .*"approve:7"/);
    const queryId = fake.pressButton(CHAT, messageId, "approve:7");
    const updates = (await callApi(fake, "getUpdates")).body.result as Update[];
    expect(updates).toEqual([
      expect.objectContaining({
        callback_query: expect.objectContaining({
          id: queryId,
          data: "approve:7",
          message: expect.objectContaining({ message_id: messageId }),
        }),
      }),
    ]);
    expect(
      (await callApi(fake, "answerCallbackQuery", { callback_query_id: queryId, text: "Approved" })).status,
    ).toBe(200);
    expect(fake.callbackAnswer(queryId)).toEqual({ text: "Approved", showAlert: false });
    const twice = await callApi(fake, "answerCallbackQuery", { callback_query_id: queryId });
    expect(twice.body.description).toBe(
      "Bad Request: query is too old and response timeout expired or query ID is invalid",
    );
  });
});

describe("getUpdates", () => {
  it("holds a long poll until an update arrives", async () => {
    const poll = callApi(fake, "getUpdates", { timeout: 20 });
    expect(await isSettled(fake, poll)).toBe(false);
    fake.sendText(CHAT, "hello");
    const answer = await poll;
    expect((answer.body.result as Update[]).map((u) => u.message?.text)).toEqual(["hello"]);
  });

  it("answers an empty list when the timeout passes", async () => {
    const started = Date.now();
    const answer = await callApi(fake, "getUpdates", { timeout: 1 });
    expect(answer.body).toEqual({ ok: true, result: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("confirms updates below the offset and honours limit", async () => {
    fake.sendText(CHAT, "one");
    fake.sendText(CHAT, "two");
    const first = (await callApi(fake, "getUpdates", { limit: 1 })).body.result as Update[];
    expect(first.map((u) => u.message?.text)).toEqual(["one"]);
    const next = (await callApi(fake, "getUpdates", { offset: (first[0] as Update).update_id + 1 })).body
      .result as Update[];
    expect(next.map((u) => u.message?.text)).toEqual(["two"]);
    const none = await callApi(fake, "getUpdates", { offset: (next[0] as Update).update_id + 1 });
    expect(none.body.result).toEqual([]);
  });

  it("drops update kinds outside allowed_updates", async () => {
    fake.sendText(CHAT, "text is not wanted");
    const answer = await callApi(fake, "getUpdates", { allowed_updates: ["callback_query"] }, "query");
    expect(answer.body.result).toEqual([]);
  });

  it("terminates an older poll with 409 when a second one arrives", async () => {
    const older = callApi(fake, "getUpdates", { timeout: 20 });
    expect(await isSettled(fake, older)).toBe(false);
    await callApi(fake, "getUpdates", { timeout: 0 });
    expect((await older).body).toEqual({
      ok: false,
      error_code: 409,
      description:
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    });
  });
});

describe("webhook", () => {
  let server: Server;
  let hookUrl: string;
  const received: Array<{ secret: string | undefined; update: Update }> = [];
  let answers: Array<{ status: number; body?: unknown }> = [];
  let arrived: () => void = () => undefined;

  beforeEach(async () => {
    received.length = 0;
    answers = [];
    server = createServer((req: IncomingMessage, res) => {
      let raw = "";
      req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
      req.on("end", () => {
        const answer = answers.shift() ?? { status: 200 };
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(answer.body === undefined ? "" : JSON.stringify(answer.body));
        if (answer.status === 200) {
          received.push({
            secret: req.headers["x-telegram-bot-api-secret-token"] as string | undefined,
            update: JSON.parse(raw) as Update,
          });
          arrived();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterEach(async () => {
    await fake.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  const nextDelivery = (): Promise<void> => new Promise((resolve) => (arrived = resolve));

  it("POSTs updates with the secret header instead of queueing them for getUpdates", async () => {
    fake.addChat(CHAT);
    await callApi(fake, "setWebhook", { url: hookUrl, secret_token: "s3cret" });
    const delivered = nextDelivery();
    fake.sendText(CHAT, "via hook");
    await delivered;
    expect(received).toEqual([
      {
        secret: "s3cret",
        update: expect.objectContaining({ message: expect.objectContaining({ text: "via hook" }) }),
      },
    ]);
    expect((await callApi(fake, "getUpdates")).status).toBe(409);
    expect((await callApi(fake, "getWebhookInfo")).body.result).toEqual({
      url: hookUrl,
      has_custom_certificate: false,
      pending_update_count: 0,
    });
  });

  it("re-delivers after a failed answer, reports the error and performs a method returned in the answer", async () => {
    fake.addChat(CHAT);
    answers = [
      { status: 500 },
      { status: 200, body: { method: "sendMessage", chat_id: CHAT, text: "answered inline" } },
    ];
    await callApi(fake, "setWebhook", { url: hookUrl });
    const delivered = nextDelivery();
    fake.sendText(CHAT, "retry me");
    await delivered;
    await fake.waitForMessages(CHAT, 1);
    expect(fake.sent(CHAT).map((r) => r.text)).toEqual(["answered inline"]);
    expect(fake.webhookInfo().last_error_message).toBe(
      "Wrong response from the webhook: 500 Internal Server Error",
    );
    expect(fake.requests("sendMessage")[0]?.via).toBe("webhook-reply");
  });

  it("queues for getUpdates again after deleteWebhook", async () => {
    await callApi(fake, "setWebhook", { url: hookUrl });
    await callApi(fake, "deleteWebhook");
    fake.sendText(CHAT, "polled");
    const updates = (await callApi(fake, "getUpdates")).body.result as Update[];
    expect(updates.map((u) => u.message?.text)).toEqual(["polled"]);
    expect(received).toEqual([]);
  });
});

describe("failure injection", () => {
  it("answers 429 with retry_after for the next calls, then works again", async () => {
    fake.addChat(CHAT);
    fake.failNext("sendMessage", { error_code: 429, retry_after: 3 }, 2);
    const first = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "a" });
    const second = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "a" });
    const third = await callApi(fake, "sendMessage", { chat_id: CHAT, text: "a" });
    expect(first).toEqual({
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 3",
        parameters: { retry_after: 3 },
      },
    });
    expect(second.status).toBe(429);
    expect(third.status).toBe(200);
    expect(fake.sent(CHAT)).toHaveLength(1);
  });

  it("injects a given error code and description", async () => {
    fake.addChat(CHAT);
    fake.failNext("sendmessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" });
    expect((await callApi(fake, "sendMessage", { chat_id: CHAT, text: "a" })).body).toEqual({
      ok: false,
      error_code: 403,
      description: "Forbidden: bot was blocked by the user",
    });
  });
});

describe("waitForMessages", () => {
  it("resolves once the count is reached, or a record matches", async () => {
    fake.addChat(CHAT);
    const two = fake.waitForMessages(CHAT, 2, { timeoutMs: 2_000 });
    const approved = fake.waitForMessages(CHAT, (r) => r.plainText.includes("approved"), {
      timeoutMs: 2_000,
    });
    await callApi(fake, "sendMessage", { chat_id: CHAT, text: "first" });
    expect(await isSettled(fake, two)).toBe(false);
    await callApi(fake, "sendMessage", { chat_id: CHAT, text: "task approved" });
    expect((await two).map((r) => r.text)).toEqual(["first", "task approved"]);
    expect((await approved).length).toBe(2);
  });

  it("fails at the deadline listing what the bot did send", async () => {
    fake.addChat(CHAT);
    await callApi(fake, "sendMessage", { chat_id: CHAT, text: "only this" });
    await expect(fake.waitForMessages(CHAT, 3, { timeoutMs: 50 })).rejects.toThrow(
      /expected 3 record\(s\) within 50 ms; received 1:\n {2}#1 sent: "only this"/,
    );
  });
});
