import { API_ERRORS } from "./bot-api.error.ts";
import { updateType, type Update, type UpdateType } from "./bot-api.types.ts";

export interface PollRequest {
  offset?: number;
  /** 1–100, default 100. */
  limit?: number;
  /** Seconds to hold the request while there is nothing to return; 0 answers at once. */
  timeoutSec?: number;
  allowedUpdates?: UpdateType[];
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
}

interface Waiter {
  wake: () => void;
  supersede: () => void;
}

/**
 * Updates not yet confirmed by the bot, in `update_id` order. Confirmation follows the Bot API:
 * an update is forgotten once `getUpdates` is called with an offset above its id (or once the
 * webhook acknowledged it).
 */
export class UpdateQueue {
  private readonly pending: Update[] = [];
  private nextUpdateId = 1;
  private allowed: UpdateType[] | undefined;
  private waiter: Waiter | undefined;
  private readonly pushListeners = new Set<() => void>();

  push(content: Omit<Update, "update_id">): Update {
    const update = { update_id: this.nextUpdateId++, ...content } as Update;
    if (this.allowed && this.allowed.length > 0 && !this.allowed.includes(updateType(update))) return update;
    this.pending.push(update);
    this.waiter?.wake();
    for (const listener of this.pushListeners) listener();
    return update;
  }

  onPush(listener: () => void): () => void {
    this.pushListeners.add(listener);
    return () => this.pushListeners.delete(listener);
  }

  get size(): number {
    return this.pending.length;
  }

  peek(): Update | undefined {
    return this.pending[0];
  }

  /** Forgets every update with `update_id < offset`; a negative offset keeps the last `-offset`. */
  confirm(offset: number): void {
    if (offset < 0) {
      this.pending.splice(0, Math.max(0, this.pending.length + offset));
      return;
    }
    while (this.pending.length > 0 && (this.pending[0] as Update).update_id < offset) this.pending.shift();
  }

  setAllowedUpdates(types: UpdateType[] | undefined): void {
    if (types === undefined) return; // the API keeps the previous setting
    this.allowed = types;
    if (types.length === 0) return;
    for (let i = this.pending.length - 1; i >= 0; i--) {
      if (!types.includes(updateType(this.pending[i] as Update))) this.pending.splice(i, 1);
    }
  }

  dropAll(): void {
    this.pending.length = 0;
  }

  /**
   * `getUpdates`: confirms below `offset`, then answers at once when something is pending, else
   * holds the request until an update arrives, the timeout passes, the client disconnects or
   * another `getUpdates` takes over (that one wins; this one gets 409 like the real server).
   */
  async poll(request: PollRequest): Promise<Update[]> {
    if (request.offset !== undefined && request.offset !== 0) this.confirm(request.offset);
    this.setAllowedUpdates(request.allowedUpdates);
    const limit = Math.min(Math.max(request.limit ?? 100, 1), 100);
    this.waiter?.supersede();
    const timeoutMs = (request.timeoutSec ?? 0) * 1000;
    if (this.pending.length === 0 && timeoutMs > 0 && !request.signal?.aborted) {
      await this.hold(timeoutMs, request.signal);
    }
    return this.pending.slice(0, limit);
  }

  /** Answers every held poll now (used on stop). */
  releaseAll(): void {
    this.waiter?.wake();
  }

  private hold(timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        if (this.waiter === waiter) this.waiter = undefined;
      };
      const waiter: Waiter = {
        wake: () => {
          done();
          resolve();
        },
        supersede: () => {
          done();
          reject(API_ERRORS.terminatedByOtherPoll());
        },
      };
      const timer = setTimeout(waiter.wake, timeoutMs);
      signal?.addEventListener("abort", waiter.wake);
      this.waiter = waiter;
    });
  }
}

/**
 * Fields of an update's message given as JSON text, spliced in when the update is sent: lets a
 * test send what JSON.stringify cannot produce (input nested thousands of levels deep), as a
 * hostile or broken sender would.
 */
const RAW_FIELDS = Symbol("raw message fields");

export function withRawFields<T extends object>(message: T, fields: Record<string, string>): T {
  Object.defineProperty(message, RAW_FIELDS, { value: fields, enumerable: false });
  return message;
}

function jsonWithRawFields(value: unknown): string {
  const raw = (value as { [RAW_FIELDS]?: Record<string, string> } | null)?.[RAW_FIELDS];
  const text = JSON.stringify(value);
  if (!raw || Object.keys(raw).length === 0) return text;
  const extra = Object.entries(raw).map(([key, json]) => `${JSON.stringify(key)}:${json}`);
  return `${text.slice(0, -1)}${text.length > 2 ? "," : ""}${extra.join(",")}}`;
}

/** An update as the Bot API sends it (raw message fields included). */
export function updateJson(update: Update): string {
  const parts = Object.entries(update).map(([key, value]) => `${JSON.stringify(key)}:${jsonWithRawFields(value)}`);
  return `{${parts.join(",")}}`;
}
