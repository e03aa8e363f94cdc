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
      input: { kind: "message", updateId: 7, chatId: -100, userId: 42, messageId: 3, text: "hi" },
    });
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
      },
    });
  });

  it("keeps the sender of messages it does not act on, for the allowlist", () => {
    const photo = { update_id: 9, message: { message_id: 1, chat: { id: 5 }, from: { id: 6 } } };
    expect(toTelegramInput(photo)).toEqual({
      ok: true,
      input: { kind: "other", updateId: 9, chatId: 5, userId: 6 },
    });
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
