import { createRepositories } from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { BotDeps } from "../src/telegram/handlers/bot-deps.ts";
import type { BotApi } from "../src/telegram/telegram-bot-api.ts";
import { createTelegramFrontDoor } from "../src/telegram/telegram-front-door.ts";
import { capturedLogger } from "./support/captured-logger.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

/** A Bot API that cannot be reached for the first `failures` getMe calls, then answers; polls hold until stopped. */
function botApiDownFor(failures: number): BotApi {
  let left = failures;
  return {
    getMe: async () => {
      if (left-- > 0) throw new Error("connect ETIMEDOUT 149.154.167.220:443");
      return { username: "ratatoskr_bot" };
    },
    setMyCommands: async () => true,
    setWebhook: async () => true,
    deleteWebhook: async () => true,
    answerCallbackQuery: async () => true,
    getUpdates: (params, signal) =>
      params.timeoutSec === 0
        ? Promise.resolve([])
        : new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
  };
}

describe("the Telegram front door at start-up", () => {
  it("tells an outage when it starts and when it ends, not at every retry", async () => {
    const { logger, lines } = capturedLogger();
    const door = createTelegramFrontDoor({
      api: botApiDownFor(5),
      intake: { kind: "polling" },
      // No update arrives: the handlers' other dependencies are never called.
      deps: { repos: createRepositories(database.db.prisma), locale: "en" } as unknown as Omit<BotDeps, "botUsername">,
      logger,
      setupRetryDelayMs: 1,
    });
    await door.start();
    await vi.waitFor(() => expect(lines.map((l) => l.msg)).toContain("telegram long polling started"), { timeout: 10_000 });
    await door.stop();
    const startup = lines.filter((l) => String(l.msg).startsWith("telegram (at start-up)"));
    expect(startup.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "telegram (at start-up) unreachable; retrying"],
      ["info", "telegram (at start-up) reachable again"],
    ]);
    expect(startup[1]).toMatchObject({ failures: 5 });
  });
});
