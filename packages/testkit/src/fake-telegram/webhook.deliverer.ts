import type { Update, UpdateType, WebhookInfo } from "./bot-api.types.ts";
import { unixNow } from "./bot-api.types.ts";
import { updateJson, type UpdateQueue } from "./update.queue.ts";

export interface WebhookConfig {
  url: string;
  secretToken?: string;
  allowedUpdates?: UpdateType[];
  maxConnections?: number;
}

/** What the bot answered to a webhook POST; a body with `method` is a Bot API call to perform. */
export type WebhookReplyHandler = (body: Record<string, unknown>) => Promise<void>;

const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Pushes pending updates to the webhook one at a time, in order, like Telegram: an update is
 * confirmed only by a 2xx answer; a failure is recorded in `getWebhookInfo` and retried after
 * `retryDelayMs` (the real server waits longer; tests want it short).
 */
export class WebhookDeliverer {
  private config: WebhookConfig | undefined;
  private running: Promise<void> | undefined;
  private inFlight: AbortController | undefined;
  private retryTimer: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private lastError: { date: number; message: string } | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly queue: UpdateQueue,
    private readonly onReply: WebhookReplyHandler,
    private readonly retryDelayMs: number,
  ) {
    this.unsubscribe = queue.onPush(() => this.kick());
  }

  get active(): boolean {
    return this.config !== undefined;
  }

  set(config: WebhookConfig): void {
    this.config = config;
    this.lastError = undefined;
    this.kick();
  }

  async clear(): Promise<void> {
    this.config = undefined;
    this.inFlight?.abort();
    this.retryTimer?.resolve();
    await this.running;
  }

  info(): WebhookInfo {
    const info: WebhookInfo = {
      url: this.config?.url ?? "",
      has_custom_certificate: false,
      pending_update_count: this.queue.size,
    };
    if (this.config?.maxConnections !== undefined) info.max_connections = this.config.maxConnections;
    if (this.config?.allowedUpdates) info.allowed_updates = this.config.allowedUpdates;
    if (this.lastError) {
      info.last_error_date = this.lastError.date;
      info.last_error_message = this.lastError.message;
    }
    return info;
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.clear();
  }

  private kick(): void {
    if (!this.config || this.running) return;
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.config && this.queue.size > 0) this.kick();
    });
  }

  private async loop(): Promise<void> {
    for (;;) {
      const config = this.config;
      const update = this.queue.peek();
      if (!config || !update) return;
      const error = await this.deliver(config, update);
      if (error === undefined) {
        this.queue.confirm(update.update_id + 1);
        continue;
      }
      if (!this.config) return;
      this.lastError = { date: unixNow(), message: error };
      await new Promise<void>((resolve) => {
        this.retryTimer = { timer: setTimeout(resolve, this.retryDelayMs), resolve };
      });
      if (this.retryTimer) clearTimeout(this.retryTimer.timer);
      this.retryTimer = undefined;
    }
  }

  /** Returns the error text for `getWebhookInfo`, or undefined when the bot took the update. */
  private async deliver(config: WebhookConfig, update: Update): Promise<string | undefined> {
    const controller = new AbortController();
    this.inFlight = controller;
    const timeout = setTimeout(() => controller.abort(), DELIVERY_TIMEOUT_MS);
    try {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (config.secretToken) headers["x-telegram-bot-api-secret-token"] = config.secretToken;
      const response = await fetch(config.url, {
        method: "POST",
        headers,
        body: updateJson(update),
        signal: controller.signal,
      });
      const body = await response.text();
      if (!response.ok) return `Wrong response from the webhook: ${response.status} ${response.statusText}`;
      await this.performReply(body);
      return undefined;
    } catch (err) {
      return controller.signal.aborted
        ? "Connection timed out"
        : `Connection failed: ${(err as Error).message}`;
    } finally {
      clearTimeout(timeout);
      this.inFlight = undefined;
    }
  }

  private async performReply(body: string): Promise<void> {
    if (!body.trim().startsWith("{")) return;
    try {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      if (typeof parsed.method === "string") await this.onReply(parsed);
    } catch {
      // The real server ignores an answer it cannot use; the update still counts as delivered.
    }
  }
}
