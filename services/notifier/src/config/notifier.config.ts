import {
  ConfigError,
  envDurationMs,
  envEnum,
  envInt,
  envString,
  envUrl,
  loadConfig,
  type ConfigOf,
  type Env,
} from "@ratatoskr/runtime";
import type { Locale } from "../i18n/index.ts";

/**
 * The notifier's own variables. TELEGRAM_BOT_TOKEN, TELEGRAM_API_ROOT and BOT_LOCALE are the same
 * variables ingress reads: one bot, one language.
 */
export const NOTIFIER_CONFIG_SCHEMA = {
  telegram: {
    token: envString("TELEGRAM_BOT_TOKEN", {
      optional: true,
      secret: true,
      description:
        "Bot token from @BotFather; without it the notifier writes messages to its log instead of Telegram",
    }),
    apiRoot: envUrl("TELEGRAM_API_ROOT", {
      optional: true,
      protocols: ["https", "http"],
      description:
        "Bot API server to talk to instead of https://api.telegram.org (a local Bot API server, tests)",
    }),
    sendTimeoutMs: envDurationMs("NOTIFIER_SEND_TIMEOUT_MS", {
      default: 60_000,
      description:
        "A Bot API call is given up after this long; its message may still have arrived, so it is not resent blindly",
    }),
    locale: envEnum("BOT_LOCALE", ["ru", "en"] as const satisfies readonly Locale[], {
      default: "en",
      description: "Language of the bot's messages when the task has none of its own",
    }),
  },
  pacing: {
    globalPerSecond: envInt("NOTIFIER_GLOBAL_PER_SECOND", {
      default: 30,
      min: 1,
      description: "Messages per second the bot sends over all chats, shared by every notifier replica",
    }),
    chatIntervalMs: envDurationMs("NOTIFIER_CHAT_INTERVAL_MS", {
      default: 1_000,
      description: "Least time between two messages to one chat (each part of a long text counts as one)",
    }),
  },
  staleSending: {
    afterMs: envDurationMs("NOTIFIER_STALE_SENDING_MS", {
      default: 600_000,
      description:
        "Last resort: a message left mid-send this long ago that no drain settled is sent once more marked (resent) if it is must-deliver, else marked uncertain",
    }),
    leftSweepIntervalMs: envDurationMs("NOTIFIER_LEFT_SENDING_SWEEP_MS", {
      default: 1_000,
      description:
        "How often the notifier looks for chats a stopped notifier left behind (mid-send or before a send) to drain them once free",
    }),
    sweepIntervalMs: envDurationMs("NOTIFIER_STALE_SWEEP_INTERVAL_MS", {
      default: 60_000,
      description: "How often the notifier looks for stale messages (stuck sending, or pending without a job)",
    }),
    unqueuedAfterMs: envDurationMs("NOTIFIER_UNQUEUED_PENDING_MS", {
      default: 60_000,
      description: "A message still pending this long after it was stored gets its notify job queued again",
    }),
  },
};

export type NotifierConfig = ConfigOf<typeof NOTIFIER_CONFIG_SCHEMA>;

/** Reads the schema and the checks that span a unit the env helpers cannot express. */
export function loadNotifierConfig(env: Env): NotifierConfig {
  const config = loadConfig(NOTIFIER_CONFIG_SCHEMA, env);
  const { chatIntervalMs } = config.pacing;
  if (chatIntervalMs < 1_000 || chatIntervalMs % 1_000 !== 0) {
    throw new ConfigError([
      {
        name: "NOTIFIER_CHAT_INTERVAL_MS",
        message: `must be a whole number of seconds >= 1_000, got ${chatIntervalMs}`,
      },
    ]);
  }
  return config;
}
