import { describe, expect, it } from "vitest";
import { isAllowed, type Allowlist } from "../src/telegram/access/allowlist.ts";
import { toTelegramInput } from "../src/telegram/parsing/telegram-input.ts";

describe("toTelegramInput", () => {
  it("reads a text message", () => {
    const update = {
      update_id: 7,
      message: { message_id: 3, chat: { id: -100 }, from: { id: 42, is_bot: false }, text: "hi" },
    };
    expect(toTelegramInput(update)).toEqual({
      ok: true,
      input: { kind: "message", updateId: 7, chatId: -100, userId: 42, messageId: 3, text: "hi", threadId: null },
    });
  });

  it("reads the forum topic of a topic message, and none for a reply thread of a plain group", () => {
    const message = { message_id: 3, chat: { id: -100 }, from: { id: 42 }, text: "/status", message_thread_id: 77 };
    const inTopic = toTelegramInput({ update_id: 7, message: { ...message, is_topic_message: true } });
    expect(inTopic).toMatchObject({ ok: true, input: { threadId: 77 } });
    expect(toTelegramInput({ update_id: 8, message })).toMatchObject({ ok: true, input: { threadId: null } });
    const button = {
      update_id: 9,
      callback_query: {
        id: "q1",
        from: { id: 42 },
        message: { message_id: 5, chat: { id: -100 }, message_thread_id: 77, is_topic_message: true },
        data: "approve:3",
      },
    };
    expect(toTelegramInput(button)).toMatchObject({ ok: true, input: { kind: "button", threadId: 77 } });
  });

  it("reads a button press", () => {
    const update = {
      update_id: 8,
      callback_query: {
        id: "q1",
        from: { id: 42 },
        message: { message_id: 5, chat: { id: 42 } },
        data: "approve:3",
        chat_instance: "x",
      },
    };
    expect(toTelegramInput(update)).toEqual({
      ok: true,
      input: {
        kind: "button",
        updateId: 8,
        chatId: 42,
        userId: 42,
        callbackQueryId: "q1",
        data: "approve:3",
        threadId: null,
      },
    });
  });

  it("keeps the sender of media without text, for the allowlist and the 'text only' answer", () => {
    const photo = { update_id: 9, message: { message_id: 1, chat: { id: 5 }, from: { id: 6 } } };
    expect(toTelegramInput(photo)).toEqual({
      ok: true,
      input: { kind: "media", updateId: 9, chatId: 5, userId: 6, messageId: 1, threadId: null },
    });
  });

  it("takes a caption as the text", () => {
    const photo = { update_id: 9, message: { message_id: 1, chat: { id: 5 }, caption: "see this", photo: [] } };
    expect(toTelegramInput(photo)).toMatchObject({ ok: true, input: { kind: "message", text: "see this" } });
  });

  it("reads an edit as nothing to act on", () => {
    const edit = { update_id: 9, edited_message: { message_id: 1, chat: { id: -5 }, from: { id: 6 }, text: "x" } };
    expect(toTelegramInput(edit)).toEqual({
      ok: true,
      input: { kind: "other", updateId: 9, chatId: -5, userId: 6, threadId: null },
    });
  });

  it("strips U+0000 from every text at the edge", () => {
    const update = { update_id: 9, message: { message_id: 1, chat: { id: 5 }, text: "a\u0000b\u0000" } };
    expect(toTelegramInput(update)).toMatchObject({ ok: true, input: { text: "ab" } });
    const press = {
      update_id: 10,
      callback_query: { id: "q\u0000", from: { id: 1 }, data: "approve:1\u0000" },
    };
    expect(toTelegramInput(press)).toMatchObject({ ok: true, input: { callbackQueryId: "q", data: "approve:1" } });
  });

  it.each([
    ["chat id", { update_id: 1, message: { message_id: 1, chat: { id: 2 ** 60 }, text: "x" } }],
    ["user id", { update_id: 1, message: { message_id: 1, chat: { id: 1 }, from: { id: -(2 ** 54) }, text: "x" } }],
    ["message id", { update_id: 1, message: { message_id: 1.5, chat: { id: 1 }, text: "x" } }],
    ["update id", { update_id: 2 ** 53 }],
  ])("refuses a %s out of range as malformed", (_what, update) => {
    expect(toTelegramInput(update)).toMatchObject({ ok: false });
  });

  it("names what is wrong with a malformed update", () => {
    expect(toTelegramInput({ message: { text: "x" } })).toEqual({
      ok: false,
      error: expect.stringContaining("update_id"),
    });
    expect(toTelegramInput("nope")).toMatchObject({ ok: false });
  });
});

describe("isAllowed", () => {
  const allowlist: Allowlist = { chatIds: new Set([100, -200]), userIds: new Set([7]) };

  it.each([
    [{ chatId: 100, userId: 1 }, true],
    [{ chatId: -200, userId: null }, true],
    [{ chatId: 300, userId: 7 }, true],
    [{ chatId: 300, userId: 8 }, false],
    [{ chatId: 300, userId: null }, false],
  ])("%j → %s", (sender, expected) => {
    expect(isAllowed(allowlist, sender)).toBe(expected);
  });

  it("allows nobody with empty lists", () => {
    expect(isAllowed({ chatIds: new Set(), userIds: new Set() }, { chatId: 1, userId: 1 })).toBe(false);
  });
});
