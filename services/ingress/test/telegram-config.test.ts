import { ConfigError } from "@ratatoskr/runtime";
import { describe, expect, it } from "vitest";
import { loadTelegramConfig } from "../src/telegram/config/telegram.config.ts";

const TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi";

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadTelegramConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.name} ${p.message}`);
    throw err;
  }
  return [];
}

describe("loadTelegramConfig", () => {
  it("is off without a token and still carries the task limits", () => {
    expect(loadTelegramConfig({})).toEqual({
      enabled: false,
      limits: { maxTurns: 10, maxRounds: 3, budgetUsd: null },
    });
  });

  it("reads the per-task budget in dollars; unset is no budget", () => {
    expect(loadTelegramConfig({ TASK_BUDGET_USD: "2.5" }).limits.budgetUsd).toBe(2.5);
    expect(problems({ TASK_BUDGET_USD: "-2" })).toEqual([
      expect.stringMatching(/^TASK_BUDGET_USD must be US dollars/),
    ]);
  });

  it("polls by default and reads both allowlists", () => {
    const config = loadTelegramConfig({
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_ALLOWED_CHAT_IDS: "1, -1001234567890",
      TELEGRAM_ALLOWED_USER_IDS: "7",
      BOT_LOCALE: "ru",
    });
    expect(config).toMatchObject({
      enabled: true,
      intake: { kind: "polling" },
      allowlist: { chatIds: new Set([1, -1_001_234_567_890]), userIds: new Set([7]) },
      locale: "ru",
    });
  });

  it("serves the webhook on the URL's path", () => {
    const config = loadTelegramConfig({
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_ALLOWED_USER_IDS: "7",
      TELEGRAM_WEBHOOK_URL: "https://bot.example.com/hooks/telegram",
      TELEGRAM_WEBHOOK_SECRET: "s3cret",
    });
    expect(config).toMatchObject({
      intake: {
        kind: "webhook",
        url: "https://bot.example.com/hooks/telegram",
        path: "/hooks/telegram",
        secret: "s3cret",
      },
    });
  });

  it("names every problem at once and never echoes the secret", () => {
    const found = problems({
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_ALLOWED_CHAT_IDS: "12,abc",
      TELEGRAM_WEBHOOK_URL: "https://bot.example.com",
    });
    expect(found).toEqual([
      expect.stringMatching(/^TELEGRAM_ALLOWED_CHAT_IDS must list integer ids, got "abc"/),
      expect.stringMatching(/^TELEGRAM_WEBHOOK_URL needs a path/),
      expect.stringMatching(/^TELEGRAM_WEBHOOK_SECRET is required/),
    ]);
    expect(
      problems({
        TELEGRAM_BOT_TOKEN: TOKEN,
        TELEGRAM_ALLOWED_USER_IDS: "1",
        TELEGRAM_WEBHOOK_SECRET: "bad secret!",
      }),
    ).toEqual([expect.stringMatching(/^TELEGRAM_WEBHOOK_SECRET .*value hidden/)]);
  });

  it("requires an allowlist with a token", () => {
    expect(problems({ TELEGRAM_BOT_TOKEN: TOKEN })).toEqual([
      expect.stringMatching(/^TELEGRAM_ALLOWED_CHAT_IDS or TELEGRAM_ALLOWED_USER_IDS/),
    ]);
  });
});
