import { describe, expect, it } from "vitest";
import { classifySendFailure } from "../src/delivery/send-failure.ts";
import { PermanentTelegramError, RetryAfterError, TransientTelegramError } from "../src/telegram/index.ts";

describe("classifySendFailure", () => {
  it("holds the chat on a 429 and keeps the parts already sent", () => {
    expect(classifySendFailure(new RetryAfterError(3_000, [41, 42]))).toMatchObject({
      kind: "retry-after",
      waitMs: 3_000,
      sentMessageIds: [41, 42],
    });
  });

  it.each(["chat-not-found", "bot-blocked", "bot-kicked", "user-deactivated", "chat-migrated"] as const)(
    "drops the message when the chat cannot receive it (%s)",
    (reason) => {
      expect(classifySendFailure(new PermanentTelegramError(reason, "Forbidden"))).toMatchObject({
        kind: "unreachable",
        reason,
      });
    },
  );

  it.each(["bad-markup", "message-too-long", "unauthorized", "bad-request"] as const)(
    "fails the message when Telegram rejects the message itself (%s)",
    (reason) => {
      expect(classifySendFailure(new PermanentTelegramError(reason, "Bad Request"))).toMatchObject({
        kind: "rejected",
        reason,
      });
    },
  );

  it("retries network errors, 5xx and anything unknown, keeping the parts already sent", () => {
    expect(classifySendFailure(new TransientTelegramError("502 Bad Gateway", [7]))).toMatchObject({
      kind: "transient",
      sentMessageIds: [7],
    });
    expect(classifySendFailure(new Error("ECONNRESET"))).toMatchObject({
      kind: "transient",
      sentMessageIds: [],
    });
  });
});
