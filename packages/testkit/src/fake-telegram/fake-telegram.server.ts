import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { buildBotApiApp } from "./bot-api.app.ts";
import { API_ERRORS, BotApiError } from "./bot-api.error.ts";
import {
  unixNow,
  type BotCommand,
  type Chat,
  type Message,
  type Update,
  type User,
  type WebhookInfo,
} from "./bot-api.types.ts";
import { BOT_METHODS } from "./bot.methods.ts";
import { ChatStore, type ChatBlock, type StoredMessage } from "./chat.store.ts";
import { AnswerFaults, FailureInjector, type InjectedFailure } from "./failure.injector.ts";
import { MESSAGE_METHODS, toApiMessage } from "./message.methods.ts";
import type { CallbackAnswer, CallbackQueryState, MethodContext, MethodHandler } from "./method.context.ts";
import { mergeParams, type Params } from "./request-params.ts";
import { SentLog, type SentCondition, type SentRecord, type WaitOptions } from "./sent.log.ts";
import { UpdateQueue, updateJson, withRawFields } from "./update.queue.ts";
import { botCommandEntities, defaultUser } from "./user-input.ts";
import { WebhookDeliverer } from "./webhook.deliverer.ts";

export interface FakeTelegramOptions {
  /** Default `123456:TEST-TOKEN`; the part before `:` is the bot's user id, as in real tokens. */
  token?: string;
  /** Default `ratatoskr_test_bot`. */
  botUsername?: string;
  /** Pause before re-delivering an update the webhook refused. Default 50 ms. */
  webhookRetryDelayMs?: number;
}

/** One Bot API call as the fake received it. */
export interface RecordedRequest {
  /** Canonical method name (`sendMessage`), whatever case the client used. */
  method: string;
  params: Params;
  /** `webhook-reply`: a method the bot returned in its answer to a webhook POST. */
  via: "GET" | "POST" | "webhook-reply";
  time: number;
}

const HANDLERS: Record<string, MethodHandler> = { ...BOT_METHODS, ...MESSAGE_METHODS };
const BY_LOWER_NAME = new Map(Object.keys(HANDLERS).map((name) => [name.toLowerCase(), name]));
const API_PATH = /^\/bot([^/]+)\/([^/?]+)\/?$/;

/**
 * A Telegram Bot API server on 127.0.0.1 for tests: the bot under test talks to it through
 * `apiRoot` (telegraf: `new Telegraf(token, { telegram: { apiRoot: fake.url } })`), and the test
 * plays the person with `sendText` / `pressButton` and reads what the bot said with `sent` /
 * `waitForMessages`. Answers, errors and their texts follow https://core.telegram.org/bots/api.
 */
export class FakeTelegram {
  readonly token: string;
  readonly bot: User;
  private readonly chats = new ChatStore();
  private readonly sentLog = new SentLog();
  private readonly updates = new UpdateQueue();
  private readonly failures = new FailureInjector();
  private readonly answerFaults = new AnswerFaults();
  private readonly callbackQueries = new Map<string, CallbackQueryState>();
  private readonly commandList: { list: BotCommand[] } = { list: [] };
  private readonly requestLog: RecordedRequest[] = [];
  private readonly webhook: WebhookDeliverer;
  private app: FastifyInstance | undefined;
  private address: string | undefined;
  private nextCallbackId = 1;

  constructor(options: FakeTelegramOptions = {}) {
    this.token = options.token ?? "123456:TEST-TOKEN";
    const botId = Number(this.token.split(":")[0]);
    this.bot = {
      id: Number.isInteger(botId) && botId > 0 ? botId : 123456,
      is_bot: true,
      first_name: "Ratatoskr Test",
      username: options.botUsername ?? "ratatoskr_test_bot",
    };
    this.webhook = new WebhookDeliverer(
      this.updates,
      (body) => this.performWebhookReply(body),
      options.webhookRetryDelayMs ?? 50,
    );
  }

  /** `http://127.0.0.1:<port>`, the `apiRoot` for the bot. Available after `start()`. */
  get url(): string {
    if (!this.address) throw new Error("FakeTelegram is not started: call start() first");
    return this.address;
  }

  async start(): Promise<this> {
    if (this.app) return this;
    const app = buildBotApiApp((request, reply) => this.handle(request, reply));
    this.address = await app.listen({ host: "127.0.0.1", port: 0 });
    this.app = app;
    return this;
  }

  /** Answers held long polls, stops webhook delivery and closes the server. */
  async stop(): Promise<void> {
    await this.webhook.stop();
    this.updates.releaseAll();
    await this.app?.close();
    this.app = undefined;
    this.address = undefined;
  }

  // ---- the person's side ----

  /** Makes a chat exist (a person started the bot) without sending anything. */
  addChat(chatId: number, chat?: Partial<Chat>): Chat {
    return this.chats.ensure(chatId, chat);
  }

  /** The person writes `text`; `/commands` carry `bot_command` entities as in real updates. */
  sendText(
    chatId: number,
    text: string,
    options: { from?: Partial<User>; rawFields?: Record<string, string>; threadId?: number } = {},
  ): Message {
    const chat = this.chats.ensure(chatId);
    const entities = botCommandEntities(text);
    const stored = this.chats.add(chatId, {
      author: "user",
      from: defaultUser(chatId, options.from),
      text,
      plainText: text,
      entities,
      parseMode: undefined,
      replyMarkup: undefined,
      date: unixNow(),
    });
    const message = toApiMessage(chat, stored);
    // Written in a forum topic: Telegram marks the message with its topic's thread id.
    if (options.threadId !== undefined) Object.assign(message, { message_thread_id: options.threadId, is_topic_message: true });
    this.updates.push({ message: options.rawFields ? withRawFields(message, options.rawFields) : message });
    return message;
  }

  /**
   * The person presses an inline button of a bot message; returns the callback query id.
   * Throws when the message has no such button (a real client could not press it).
   */
  pressButton(
    chatId: number,
    messageId: number,
    callbackData: string,
    options: { from?: Partial<User> } = {},
  ): string {
    const stored = this.chats.get(chatId, messageId);
    const chat = this.chats.chat(chatId);
    if (!stored || !chat) throw new Error(`pressButton: chat ${chatId} has no message ${messageId}`);
    const buttons = stored.replyMarkup?.inline_keyboard.flat() ?? [];
    if (!buttons.some((button) => button.callback_data === callbackData)) {
      const offered = buttons.map((b) => b.callback_data).filter((d) => d !== undefined);
      throw new Error(
        `pressButton: message ${messageId} in chat ${chatId} has no button with callback_data ` +
          `${JSON.stringify(callbackData)}; it has ${JSON.stringify(offered)}`,
      );
    }
    const id = String(this.nextCallbackId++);
    this.callbackQueries.set(id, { chatId, messageId, data: callbackData, answer: undefined });
    this.updates.push({
      callback_query: {
        id,
        from: defaultUser(chatId, options.from),
        message: toApiMessage(chat, stored),
        chat_instance: String(chatId),
        data: callbackData,
      },
    });
    return id;
  }

  /** The bot can no longer write to the chat: 403 "bot was blocked by the user" (or kicked/deactivated). */
  blockBot(chatId: number, how: ChatBlock = "blocked"): void {
    this.chats.setBlock(chatId, how);
  }

  unblockBot(chatId: number): void {
    this.chats.setBlock(chatId, undefined);
  }

  // ---- what the bot did ----

  /** Every message the bot sent or edited, oldest first; optionally of one chat. */
  sent(chatId?: number): SentRecord[] {
    return this.sentLog.list(chatId);
  }

  /** See `SentLog.waitFor`: a count of records, or a predicate one record must match. */
  waitForMessages(chatId: number, condition: SentCondition, options?: WaitOptions): Promise<SentRecord[]> {
    return this.sentLog.waitFor(chatId, condition, options);
  }

  /** The current state of a message (including deleted ones, flagged `deleted`). */
  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.chats.peek(chatId, messageId);
  }

  callbackAnswer(callbackQueryId: string): CallbackAnswer | undefined {
    return this.callbackQueries.get(callbackQueryId)?.answer;
  }

  /** Every call the fake received, oldest first; optionally of one method. */
  requests(method?: string): RecordedRequest[] {
    const wanted = method?.toLowerCase();
    return this.requestLog.filter((r) => wanted === undefined || r.method.toLowerCase() === wanted);
  }

  commands(): BotCommand[] {
    return this.commandList.list;
  }

  webhookInfo(): WebhookInfo {
    return this.webhook.info();
  }

  /** The next `times` calls of `method` fail with this error instead of running. */
  failNext(method: string, failure: InjectedFailure, times = 1): void {
    this.failures.add(method, failure, times);
  }

  /**
   * The next `times` calls of `method` run (a message is delivered) but their answer comes `ms`
   * late — or never, if the bot gives up and closes the connection first.
   */
  answerLate(method: string, ms: number, times = 1): void {
    this.answerFaults.add(method, { kind: "delay", ms }, times);
  }

  /** The next `times` calls of `method` run, then the connection is reset instead of answered. */
  resetAfterRunning(method: string, times = 1): void {
    this.answerFaults.add(method, { kind: "reset" }, times);
  }

  // ---- the API ----

  private async handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const path = new URL(request.url, "http://fake").pathname;
    const match = API_PATH.exec(path);
    const method = match ? BY_LOWER_NAME.get((match[2] ?? "").toLowerCase()) : undefined;
    const controller = new AbortController();
    reply.raw.on("close", () => controller.abort());
    try {
      if (!match) throw API_ERRORS.methodNotFound();
      if (decodeURIComponent(match[1] ?? "") !== this.token) throw API_ERRORS.unauthorized();
      if (!method) throw API_ERRORS.methodNotFound();
      const params = mergeParams(request.query, request.body);
      const result = await this.call(
        method,
        params,
        request.method === "GET" ? "GET" : "POST",
        controller.signal,
      );
      const fault = this.answerFaults.take(method);
      if (fault?.kind === "reset") {
        reply.hijack();
        request.raw.socket.resetAndDestroy();
        return;
      }
      if (fault?.kind === "delay") {
        const gaveUp = await sleep(fault.ms, false, { signal: controller.signal }).catch(() => true);
        if (gaveUp) return;
      }
      if (method === "getUpdates") {
        // Spelled out so that raw message fields (see withRawFields) reach the bot as given.
        const updates = (result as Update[]).map(updateJson).join(",");
        await reply.code(200).type("application/json").send(`{"ok":true,"result":[${updates}]}`);
        return;
      }
      await reply.code(200).send({ ok: true, result });
    } catch (err) {
      const apiError =
        err instanceof BotApiError
          ? err
          : new BotApiError(500, `Internal Server Error: ${(err as Error).message}`);
      await reply.code(apiError.errorCode).send(apiError.toBody());
    }
  }

  private async call(
    method: string,
    params: Params,
    via: RecordedRequest["via"],
    signal: AbortSignal,
  ): Promise<unknown> {
    this.requestLog.push({ method, params, via, time: Date.now() });
    const injected = this.failures.take(method);
    if (injected) throw injected;
    const ctx: MethodContext = {
      bot: this.bot,
      chats: this.chats,
      sent: this.sentLog,
      updates: this.updates,
      webhook: this.webhook,
      callbackQueries: this.callbackQueries,
      commands: this.commandList,
      signal,
    };
    return (HANDLERS[method] as MethodHandler)(params, ctx);
  }

  /** Telegram performs a method the bot put in its webhook answer; its result goes nowhere. */
  private async performWebhookReply(body: Record<string, unknown>): Promise<void> {
    const { method: rawMethod, ...params } = body;
    const method = BY_LOWER_NAME.get(String(rawMethod).toLowerCase());
    if (!method) return;
    await this.call(method, params, "webhook-reply", new AbortController().signal).catch(() => undefined);
  }
}
