import type { Logger } from "@ratatoskr/runtime";
import type { FastifyInstance } from "fastify";
import { commandMenu } from "./bot-commands.ts";
import type { TelegramIntake } from "./config/telegram.config.ts";
import { abortableSleep } from "./delivery/abortable-sleep.ts";
import { ChatSequencer } from "./delivery/chat-sequencer.ts";
import { TelegramPoller } from "./delivery/telegram-poller.ts";
import { registerTelegramWebhook, type WebhookOutcome } from "./delivery/telegram-webhook.route.ts";
import type { BotDeps } from "./handlers/bot-deps.ts";
import { handleTelegramInput } from "./handlers/telegram-input.handler.ts";
import { toTelegramInput } from "./parsing/telegram-input.ts";
import type { BotApi } from "./telegram-bot-api.ts";

export interface TelegramFrontDoorOptions {
  api: BotApi;
  intake: TelegramIntake;
  /** Handler dependencies except the bot's username, which the front door learns at start. */
  deps: Omit<BotDeps, "botUsername">;
  logger: Logger;
  /** Pause before retrying a failed start-up call to Telegram (doubles up to 60 s). */
  setupRetryDelayMs?: number;
  pollTimeoutSec?: number;
}

export interface TelegramFrontDoor {
  routes(app: FastifyInstance): Promise<void>;
  start(): Promise<void>;
  /** Stops intake and waits for the updates in hand to be handled. */
  stop(): Promise<void>;
}

const MAX_SETUP_RETRY_DELAY_MS = 60_000;
/** Attempts for a polled update (webhook updates are redelivered by Telegram instead). */
const POLLED_UPDATE_ATTEMPTS = 6;
const UPDATE_RETRY_DELAY_MS = 500;

/** The Telegram side of ingress: update intake (polling or webhook), per-chat order, handlers. */
export function createTelegramFrontDoor(opts: TelegramFrontDoorOptions): TelegramFrontDoor {
  const log = opts.logger.child({ component: "telegram" });
  const sequencer = new ChatSequencer();
  const stopping = new AbortController();
  let username: string | undefined;
  let poller: TelegramPoller | undefined;
  let setup: Promise<void> | undefined;
  const deps: BotDeps = { ...opts.deps, logger: log, botUsername: () => username };

  /**
   * Queues one update behind its chat's earlier ones. The queueing happens synchronously, before
   * the first await, so updates of one batch keep Telegram's order per chat.
   */
  function dispatch(body: unknown, attempts = 1): { outcome: WebhookOutcome; done: Promise<void> } {
    const parsed = toTelegramInput(body);
    if (!parsed.ok) {
      log.warn({ error: parsed.error }, "malformed telegram update ignored");
      return { outcome: "malformed", done: Promise.resolve() };
    }
    const { input } = parsed;
    const key = input.chatId ?? `update-${input.updateId}`;
    const done = sequencer
      .run(key, () => handleWithRetries(() => handleTelegramInput(deps, input), attempts, input.updateId))
      .catch((err: unknown) => {
        log.error({ err, updateId: input.updateId, chatId: input.chatId }, "telegram update failed");
        throw err;
      });
    return { outcome: "handled", done };
  }

  /**
   * Retries inside the chat's slot, so the chat's later updates keep waiting behind it. A failure
   * is almost always Postgres or Redis being away before anything was written.
   */
  async function handleWithRetries(
    handle: () => Promise<void>,
    attempts: number,
    updateId: number,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await handle();
      } catch (err) {
        if (attempt >= attempts || stopping.signal.aborted) throw err;
        const retryInMs = UPDATE_RETRY_DELAY_MS * 2 ** (attempt - 1);
        log.warn({ err, updateId, attempt, retryInMs }, "telegram update failed; retrying");
        await abortableSleep(retryInMs, stopping.signal);
      }
    }
  }

  /** Polling has no redelivery: a failed update is retried here before its batch is confirmed. */
  async function onBatch(updates: ReadonlyArray<{ update_id: number }>): Promise<void> {
    const running = updates.map((update) =>
      dispatch(update, POLLED_UPDATE_ATTEMPTS).done.catch(() => undefined),
    );
    await Promise.all(running);
  }

  async function connect(): Promise<void> {
    const me = await opts.api.getMe();
    username = me.username;
    await opts.api.setMyCommands(commandMenu(opts.deps.locale));
    if (opts.intake.kind === "webhook") {
      await opts.api.setWebhook(opts.intake.url, opts.intake.secret);
      log.info({ path: opts.intake.path, bot: username }, "telegram webhook set");
      return;
    }
    // A webhook left over from another deployment would make getUpdates fail with 409.
    await opts.api.deleteWebhook();
    poller = new TelegramPoller({ source: opts.api, onBatch, logger: log, timeoutSec: opts.pollTimeoutSec });
    poller.start();
    log.info({ bot: username }, "telegram long polling started");
  }

  /** Retries until Telegram answers, so an outage at deploy time does not keep ingress down. */
  async function connectInBackground(firstError: unknown): Promise<void> {
    let delayMs = opts.setupRetryDelayMs ?? 1_000;
    let err = firstError;
    while (!stopping.signal.aborted) {
      log.warn({ err, retryInMs: delayMs }, "telegram start-up failed; retrying");
      await abortableSleep(delayMs, stopping.signal);
      if (stopping.signal.aborted) return;
      try {
        return await connect();
      } catch (next) {
        err = next;
        delayMs = Math.min(delayMs * 2, MAX_SETUP_RETRY_DELAY_MS);
      }
    }
  }

  return {
    async routes(app) {
      if (opts.intake.kind !== "webhook") return;
      await registerTelegramWebhook(app, {
        path: opts.intake.path,
        secret: opts.intake.secret,
        async onUpdate(body) {
          if (stopping.signal.aborted) return "closed";
          const { outcome, done } = dispatch(body);
          await done;
          return outcome;
        },
      });
    },
    async start() {
      try {
        await connect();
      } catch (err) {
        setup = connectInBackground(err);
      }
    },
    async stop() {
      stopping.abort();
      await setup;
      await poller?.stop();
      await sequencer.idle();
      log.info("telegram intake stopped");
    },
  };
}
