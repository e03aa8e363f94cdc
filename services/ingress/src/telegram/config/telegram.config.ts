import {
  ConfigError,
  envEnum,
  envInt,
  envList,
  envString,
  envUrl,
  envUsd,
  loadConfig,
  type ConfigOf,
  type ConfigProblem,
} from "@ratatoskr/runtime";
import type { Allowlist } from "../access/allowlist.ts";

/** Telegram's own rule for `secret_token` (setWebhook). */
const WEBHOOK_SECRET_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;

export const TELEGRAM_CONFIG_SCHEMA = {
  telegram: {
    token: envString("TELEGRAM_BOT_TOKEN", {
      optional: true,
      secret: true,
      description: "Bot token from @BotFather; without it the Telegram front door is off",
    }),
    apiRoot: envUrl("TELEGRAM_API_ROOT", {
      optional: true,
      protocols: ["https", "http"],
      description:
        "Bot API server to talk to instead of https://api.telegram.org (a local Bot API server, tests)",
    }),
    webhookUrl: envUrl("TELEGRAM_WEBHOOK_URL", {
      optional: true,
      protocols: ["https", "http"],
      description:
        "Public URL Telegram posts updates to (its path is served by ingress); unset means long polling, one replica only",
    }),
    webhookSecret: envString("TELEGRAM_WEBHOOK_SECRET", {
      optional: true,
      secret: true,
      pattern: WEBHOOK_SECRET_PATTERN,
      description:
        "Secret Telegram sends in X-Telegram-Bot-Api-Secret-Token; required with TELEGRAM_WEBHOOK_URL",
    }),
    allowedChatIds: envList("TELEGRAM_ALLOWED_CHAT_IDS", {
      optional: true,
      description: "Chat ids the bot serves; with TELEGRAM_ALLOWED_USER_IDS, one of the two must match",
    }),
    allowedUserIds: envList("TELEGRAM_ALLOWED_USER_IDS", {
      optional: true,
      description: "User ids the bot serves in any chat; at least one allowlist is required with a token",
    }),
    locale: envEnum("BOT_LOCALE", ["ru", "en"], {
      default: "en",
      description: "Language of the bot's replies (ingress uses it for button toasts and the command menu)",
    }),
  },
  tasks: {
    maxTurns: envInt("TASK_MAX_TURNS", {
      default: 10,
      min: 1,
      description: "Analyst question rounds per Telegram task before the person is asked to /skip",
    }),
    maxRounds: envInt("TASK_MAX_REVIEW_ROUNDS", {
      default: 3,
      min: 1,
      description: "Dev ⇄ reviewer rounds per task before it fails with the remaining findings",
    }),
    budgetUsd: envUsd("TASK_BUDGET_USD", {
      optional: true,
      description:
        "What a task or Gitea command may spend on agent runs; past it, it pauses for Continue (+budget) / Stop (`/agent continue [+USD]` / `/agent stop`)",
    }),
  },
};

type RawTelegramConfig = ConfigOf<typeof TELEGRAM_CONFIG_SCHEMA>;

export type TelegramIntake =
  | { kind: "polling" }
  /** `path` is the webhook URL's path: the route ingress serves it on. */
  | { kind: "webhook"; url: string; path: string; secret: string };

export interface TaskLimits {
  maxTurns: number;
  maxRounds: number;
  /** TASK_BUDGET_USD: the budget a new task gets and what Continue (+budget) adds; null = none. */
  budgetUsd: number | null;
}

export type TelegramConfig =
  | { enabled: false; limits: TaskLimits }
  | {
      enabled: true;
      token: string;
      apiRoot: string | undefined;
      intake: TelegramIntake;
      allowlist: Allowlist;
      locale: "ru" | "en";
      limits: TaskLimits;
    };

function parseIds(
  name: string,
  items: readonly string[] | undefined,
  problems: ConfigProblem[],
): Set<number> {
  const ids = new Set<number>();
  for (const item of items ?? []) {
    // Telegram ids are up to 52 bits (group chats are negative), so a JS number holds them exactly.
    if (/^-?\d{1,16}$/.test(item) && Number.isSafeInteger(Number(item))) ids.add(Number(item));
    else problems.push({ name, message: `must list integer ids, got ${JSON.stringify(item.slice(0, 40))}` });
  }
  return ids;
}

function intakeOf(raw: RawTelegramConfig["telegram"], problems: ConfigProblem[]): TelegramIntake {
  if (!raw.webhookUrl) return { kind: "polling" };
  const path = new URL(raw.webhookUrl).pathname;
  if (path === "/") {
    problems.push({
      name: "TELEGRAM_WEBHOOK_URL",
      message: "needs a path for the route ingress serves, e.g. https://bot.example.com/telegram/webhook",
    });
  }
  if (!raw.webhookSecret) {
    problems.push({
      name: "TELEGRAM_WEBHOOK_SECRET",
      message: "is required with TELEGRAM_WEBHOOK_URL: without it anyone could post updates to the webhook",
    });
  }
  return { kind: "webhook", url: raw.webhookUrl, path, secret: raw.webhookSecret ?? "" };
}

/**
 * The Telegram front door's settings. The checks that span several variables live here: a bot
 * that runs coding agents must never serve everyone, and a webhook must never be open.
 */
export function loadTelegramConfig(env: NodeJS.ProcessEnv): TelegramConfig {
  const { telegram, tasks } = loadConfig(TELEGRAM_CONFIG_SCHEMA, env);
  const limits = { maxTurns: tasks.maxTurns, maxRounds: tasks.maxRounds, budgetUsd: tasks.budgetUsd ?? null };
  if (!telegram.token) return { enabled: false, limits };
  const problems: ConfigProblem[] = [];
  const chatIds = parseIds("TELEGRAM_ALLOWED_CHAT_IDS", telegram.allowedChatIds, problems);
  const userIds = parseIds("TELEGRAM_ALLOWED_USER_IDS", telegram.allowedUserIds, problems);
  if (!telegram.allowedChatIds && !telegram.allowedUserIds) {
    problems.push({
      name: "TELEGRAM_ALLOWED_CHAT_IDS",
      message:
        "or TELEGRAM_ALLOWED_USER_IDS is required with TELEGRAM_BOT_TOKEN: the bot never serves everyone",
    });
  }
  const intake = intakeOf(telegram, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    enabled: true,
    token: telegram.token,
    apiRoot: telegram.apiRoot,
    intake,
    allowlist: { chatIds, userIds },
    locale: telegram.locale,
    limits,
  };
}
