import type { IncomingUpdate } from "@ratatoskr/db";
import { createOutageLog, MAX_INPUT_DEPTH, nestedDeeperThan, type Logger } from "@ratatoskr/runtime";
import type { FastifyInstance } from "fastify";
import { commandMenu } from "./bot-commands.ts";
import type { TelegramIntake } from "./config/telegram.config.ts";
import { abortableSleep } from "./delivery/abortable-sleep.ts";
import { TelegramPoller } from "./delivery/telegram-poller.ts";
import { registerTelegramWebhook } from "./delivery/telegram-webhook.route.ts";
import { createUpdateBatcher } from "./delivery/update-batcher.ts";
import { PoisonUpdateError } from "./delivery/update-failure.ts";
import { UpdateInbox, type UpdateInboxOptions } from "./delivery/update-inbox.ts";
import type { BotDeps } from "./handlers/bot-deps.ts";
import { handleTelegramInput } from "./handlers/telegram-input.handler.ts";
import { toTelegramInput, updateEnvelope } from "./parsing/telegram-input.ts";
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
  /** Inbox timings (tests shorten them). */
  inbox?: Pick<
    UpdateInboxOptions,
    "leaseMs" | "sweepIntervalMs" | "retryDelayMs" | "maxRetryDelayMs" | "maxConcurrentChats" | "maxConcurrentHandling"
  >;
}

export interface TelegramFrontDoor {
  routes(app: FastifyInstance): Promise<void>;
  start(): Promise<void>;
  /** Stops intake and waits for the updates in hand to be handled. */
  stop(): Promise<void>;
}

const MAX_SETUP_RETRY_DELAY_MS = 60_000;
const TOO_DEEP = `update nested deeper than ${MAX_INPUT_DEPTH} levels; no Telegram update does`;

/** The Telegram side of ingress: update intake (polling or webhook) into the inbox, then handlers. */
export function createTelegramFrontDoor(opts: TelegramFrontDoorOptions): TelegramFrontDoor {
  const log = opts.logger.child({ component: "telegram" });
  const stopping = new AbortController();
  const store = opts.deps.repos.telegramUpdates;
  let username: string | undefined;
  let poller: TelegramPoller | undefined;
  let setup: Promise<void> | undefined;
  const deps: BotDeps = { ...opts.deps, logger: log, botUsername: () => username };

  const inbox = new UpdateInbox({
    store,
    logger: log,
    ...opts.inbox,
    async handle(body) {
      const parsed = toTelegramInput(body);
      if (!parsed.ok) throw new PoisonUpdateError(parsed.error);
      await handleTelegramInput(deps, parsed.input);
    },
  });

  /** Webhook updates arriving together are stored in one statement (see createUpdateBatcher). */
  const storeUpdate = createUpdateBatcher((updates) => store.accept(updates));

  /**
   * What is stored of an update: the text it came as (webhook), or its JSON (polling: telegraf
   * parsed the whole answer). One nested past what any real update does is stored as poison
   * (polled, with its id only: it cannot be serialised): acknowledged once, never handled, never
   * a failure that repeats.
   */
  function incomingOf(body: unknown, raw?: string): IncomingUpdate | null {
    const envelope = updateEnvelope(body);
    if (!envelope.ok) return null;
    const { updateId, chatId } = envelope;
    if (nestedDeeperThan(body))
      return { updateId, chatId, payload: raw ?? JSON.stringify({ update_id: updateId }), poison: TOO_DEEP };
    return { updateId, chatId, payload: raw ?? JSON.stringify(body) };
  }

  const kick = (update: IncomingUpdate) =>
    inbox.kick(update.chatId === null ? { updateId: update.updateId } : { chatId: update.chatId });

  /**
   * Polling: the batch is stored (one statement; ids seen before are skipped) before its offset
   * is confirmed. Throws when the database is away: nothing was taken, the poller retries.
   */
  async function onBatch(updates: ReadonlyArray<{ update_id: number }>): Promise<void> {
    const incoming = updates.map((u) => incomingOf(u)).filter((u): u is IncomingUpdate => u !== null);
    if (incoming.length < updates.length)
      log.warn(
        { malformed: updates.length - incoming.length },
        "telegram updates without a usable update_id skipped",
      );
    const fresh = await store.accept(incoming);
    if (fresh < incoming.length)
      log.info({ repeated: incoming.length - fresh }, "telegram updates seen before skipped");
    for (const update of incoming) kick(update);
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

  /**
   * Retries until Telegram answers, so an outage at deploy time does not keep ingress down; the
   * outage is logged when it starts, at intervals while it lasts and when it ends.
   */
  async function connectInBackground(firstError: unknown): Promise<void> {
    const outage = createOutageLog({ logger: log, what: "telegram (at start-up)" });
    outage.failed(firstError);
    let delayMs = opts.setupRetryDelayMs ?? 1_000;
    while (!stopping.signal.aborted) {
      await abortableSleep(delayMs, stopping.signal);
      if (stopping.signal.aborted) return;
      try {
        await connect();
        return outage.recovered();
      } catch (err) {
        outage.failed(err);
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
        logger: log,
        async accept({ raw, json }) {
          if (stopping.signal.aborted) return "closed";
          const update = incomingOf(json, raw);
          if (!update) return "malformed";
          await storeUpdate(update);
          kick(update);
          return "accepted";
        },
      });
    },
    async start() {
      inbox.start();
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
      await inbox.stop();
      log.info("telegram intake stopped");
    },
  };
}
