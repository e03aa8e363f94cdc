import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Markup, Telegraf, TelegramError } from "telegraf";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeTelegram } from "../src/index.ts";

const CHAT = 777;
let fake: FakeTelegram;

beforeEach(async () => {
  fake = await new FakeTelegram().start();
});
afterEach(async () => {
  await fake.stop();
});

function botFor(target: FakeTelegram): Telegraf {
  return new Telegraf(target.token, { telegram: { apiRoot: target.url } });
}

describe("telegraf against the fake", () => {
  it("launches with long polling, answers commands with ctx.reply and handles button presses", async () => {
    const bot = botFor(fake);
    bot.command("start", (ctx) =>
      ctx.reply(`Task <b>#1</b> for ${ctx.from.first_name}`, {
        parse_mode: "HTML",
        ...Markup.inlineKeyboard([Markup.button.callback("Approve", "approve:1")]),
      }),
    );
    bot.action("approve:1", async (ctx) => {
      await ctx.answerCbQuery("Approved");
      await ctx.editMessageText("Approved ✅");
    });
    bot.on("text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
    let launched: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (launched = resolve));
    // onLaunch fires after getMe, before deleteWebhook: pending updates are kept, not dropped.
    const running = bot.launch(() => launched());
    await ready;

    fake.sendText(CHAT, "/start");
    const [greeting] = await fake.waitForMessages(CHAT, 1);
    expect(greeting).toMatchObject({ plainText: "Task #1 for User 777", parseMode: "HTML" });

    fake.pressButton(CHAT, greeting?.messageId ?? 0, "approve:1");
    const afterPress = await fake.waitForMessages(CHAT, (r) => r.kind === "edited");
    expect(afterPress.at(-1)).toMatchObject({
      messageId: greeting?.messageId,
      text: "Approved ✅",
      replyMarkup: undefined,
    });

    fake.sendText(CHAT, "plain words");
    await fake.waitForMessages(CHAT, (r) => r.text === "echo: plain words");

    bot.stop("test done");
    await running;
    expect(
      fake
        .requests()
        .slice(0, 2)
        .map((r) => r.method),
    ).toEqual(["getMe", "deleteWebhook"]);
    expect(fake.requests("answerCallbackQuery")).toHaveLength(1);
  });

  it("surfaces injected errors as telegraf TelegramError with the API's fields", async () => {
    const bot = botFor(fake);
    fake.addChat(CHAT);
    fake.failNext("sendMessage", { error_code: 429, retry_after: 7 });
    const error = await bot.telegram.sendMessage(CHAT, "x").catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TelegramError);
    expect((error as TelegramError).response).toEqual({
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 7",
      parameters: { retry_after: 7 },
    });
    const malformed = await bot.telegram
      .sendMessage(CHAT, "<b>x", { parse_mode: "HTML" })
      .catch((err: unknown) => err);
    expect((malformed as TelegramError).description).toBe(
      `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`,
    );
  });

  describe("webhook mode", () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    });

    it("delivers to telegraf's webhook callback with the secret token and performs its inline reply", async () => {
      // With webhookReply telegraf answers the first allow-listed call (here sendChatAction) in the
      // webhook response body; sendMessage is not allow-listed and goes over HTTP.
      const bot = new Telegraf(fake.token, { telegram: { apiRoot: fake.url, webhookReply: true } });
      bot.on("text", async (ctx) => {
        await ctx.sendChatAction("typing");
        await ctx.reply(`hooked: ${ctx.message.text}`);
      });
      const callback = bot.webhookCallback("/hook", { secretToken: "tok_1" });
      server = createServer((req, res) => void callback(req, res));
      await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as AddressInfo).port;
      await bot.telegram.setWebhook(`http://127.0.0.1:${port}/hook`, { secret_token: "tok_1" });

      fake.sendText(CHAT, "hi");
      const [reply] = await fake.waitForMessages(CHAT, 1);
      expect(reply?.text).toBe("hooked: hi");
      // The webhook answer and the HTTP call race; the answer is performed before the update is confirmed.
      await vi.waitFor(() => expect(fake.webhookInfo().pending_update_count).toBe(0));
      expect(fake.requests("sendChatAction").map((r) => r.via)).toEqual(["webhook-reply"]);
      expect(fake.requests("sendMessage").map((r) => r.via)).toEqual(["POST"]);
    });
  });
});
