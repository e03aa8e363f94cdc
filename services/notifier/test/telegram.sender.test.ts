import { FakeTelegram } from "@ratatoskr/testkit";
import { Telegram } from "telegraf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  PermanentTelegramError,
  RetryAfterError,
  TelegramSender,
  TransientTelegramError,
  type InlineKeyboard,
} from "../src/telegram/index.ts";

const CHAT = 31337;
const KEYBOARD: InlineKeyboard = { inline_keyboard: [[{ text: "Approve", callback_data: "approve:1" }]] };
let fake: FakeTelegram;
let sender: TelegramSender;

/** Three paragraphs that cannot share one message under a limit of 120. */
const LONG = ["<b>one</b> " + "a".repeat(90), "two " + "b".repeat(90), "three " + "c".repeat(90)].join(
  "\n\n",
);

beforeEach(async () => {
  fake = await new FakeTelegram().start();
  fake.addChat(CHAT);
  // telegraf's own client, as production wires it.
  sender = new TelegramSender(new Telegram(fake.token, { apiRoot: fake.url }), { limit: 120 });
});
afterEach(async () => {
  await fake.stop();
});

describe("TelegramSender", () => {
  it("sends a long message as ordered HTML parts with the keyboard under the last one", async () => {
    const ids = await sender.send(CHAT, LONG, { replyMarkup: KEYBOARD });
    const sent = fake.sent(CHAT);
    expect(ids).toEqual(sent.map((r) => r.messageId));
    expect(sent.map((r) => r.plainText.split(" ")[0])).toEqual(["one", "two", "three"]);
    expect(sent.map((r) => r.replyMarkup)).toEqual([undefined, undefined, KEYBOARD]);
    expect(sent.every((r) => r.parseMode === "HTML")).toBe(true);
  });

  it("throws RetryAfterError on 429 without sleeping, carrying what was already sent", async () => {
    fake.failNext("sendMessage", { error_code: 429, retry_after: 5 });
    const error = await sender.send(CHAT, LONG).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RetryAfterError);
    expect(error).toMatchObject({ retryAfterMs: 5_000, sentMessageIds: [] });
    expect(fake.sent(CHAT)).toEqual([]);
  });

  it("resumes after the parts a failed attempt already delivered, sending none twice", async () => {
    const telegram = new Telegram(fake.token, { apiRoot: fake.url });
    // A client whose second call hits the rate limit, as a busy bot would.
    let calls = 0;
    const flaky = new TelegramSender(
      {
        sendMessage: async (chatId, text, extra) => {
          calls++;
          if (calls === 2) {
            throw {
              ok: false,
              error_code: 429,
              description: "Too Many Requests: retry after 1",
              parameters: { retry_after: 1 },
            };
          }
          return telegram.sendMessage(chatId, text, extra);
        },
        editMessageText: async () => true,
      },
      { limit: 120 },
    );
    const error = (await flaky.send(CHAT, LONG).catch((err: unknown) => err)) as RetryAfterError;
    expect(error).toBeInstanceOf(RetryAfterError);
    expect(error.sentMessageIds).toHaveLength(1);
    const ids = await sender.send(CHAT, LONG, { alreadySent: error.sentMessageIds });
    expect(ids).toEqual(fake.sent(CHAT).map((r) => r.messageId));
    expect(fake.sent(CHAT).map((r) => r.plainText.split(" ")[0])).toEqual(["one", "two", "three"]);
  });

  it("reports a blocked bot and a missing chat as permanent", async () => {
    fake.blockBot(CHAT);
    await expect(sender.send(CHAT, "hi")).rejects.toMatchObject({
      name: "PermanentTelegramError",
      reason: "bot-blocked",
    });
    await expect(sender.send(999, "hi")).rejects.toBeInstanceOf(PermanentTelegramError);
    await expect(sender.send(999, "hi")).rejects.toMatchObject({ reason: "chat-not-found" });
  });

  it("reports a server error as transient", async () => {
    fake.failNext("sendMessage", { error_code: 500, description: "Internal Server Error" });
    await expect(sender.send(CHAT, "hi")).rejects.toBeInstanceOf(TransientTelegramError);
  });

  it("edits a message in place and treats an identical edit as done", async () => {
    const [id = 0] = await sender.send(CHAT, "draft", { replyMarkup: KEYBOARD });
    expect(await sender.edit(CHAT, id, "<i>approved</i>")).toEqual([id]);
    expect(await sender.edit(CHAT, id, "<i>approved</i>")).toEqual([id]);
    expect(fake.sent(CHAT).map((r) => [r.kind, r.plainText, r.replyMarkup])).toEqual([
      ["sent", "draft", KEYBOARD],
      ["edited", "approved", undefined],
    ]);
  });

  it("sends the parts beyond the first as new messages when an edit grows too long", async () => {
    const [id = 0] = await sender.send(CHAT, "short");
    const ids = await sender.edit(CHAT, id, LONG);
    expect(ids).toHaveLength(3);
    expect(ids[0]).toBe(id);
    expect(fake.sent(CHAT).map((r) => r.kind)).toEqual(["sent", "edited", "sent", "sent"]);
  });
});
