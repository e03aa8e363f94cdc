import type { InlineKeyboardMarkup } from "./bot-api.types.ts";
import type { MessageEntity } from "./telegram-html.parser.ts";

/** One message the bot sent, or one edit it made (text or keyboard), in the order they happened. */
export interface SentRecord {
  kind: "sent" | "edited";
  chatId: number;
  messageId: number;
  /** The text exactly as the bot sent it (HTML source when `parseMode` is HTML). */
  text: string;
  /** What the person sees: the text after entity parsing. */
  plainText: string;
  entities: MessageEntity[];
  parseMode: string | undefined;
  replyMarkup: InlineKeyboardMarkup | undefined;
  /** Milliseconds since the epoch. */
  time: number;
}

export type SentCondition = number | ((record: SentRecord, all: readonly SentRecord[]) => boolean);

export interface WaitOptions {
  /** Default 5 000 ms. */
  timeoutMs?: number;
  /** Count or match only these kinds; default both. */
  kind?: SentRecord["kind"];
}

interface Watcher {
  check: () => boolean;
}

const DEFAULT_WAIT_MS = 5_000;

function describe(record: SentRecord): string {
  const text = record.plainText.length > 80 ? `${record.plainText.slice(0, 77)}…` : record.plainText;
  return `#${record.messageId} ${record.kind}: ${JSON.stringify(text)}`;
}

/** Everything the bot sent or edited, with event-driven waiting for tests. */
export class SentLog {
  private readonly records: SentRecord[] = [];
  private readonly watchers = new Set<Watcher>();

  append(record: SentRecord): void {
    this.records.push(record);
    for (const watcher of [...this.watchers]) watcher.check();
  }

  list(chatId?: number): SentRecord[] {
    return this.records.filter((r) => chatId === undefined || r.chatId === chatId);
  }

  /**
   * Resolves with the chat's records once `condition` holds: a number means "at least this many
   * records", a predicate means "some record matches". Rejects at the deadline with a listing of
   * what did arrive, so a failing test says what the bot said instead.
   */
  waitFor(chatId: number, condition: SentCondition, options: WaitOptions = {}): Promise<SentRecord[]> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    const relevant = (): SentRecord[] =>
      this.list(chatId).filter((r) => options.kind === undefined || r.kind === options.kind);
    const holds = (records: SentRecord[]): boolean =>
      typeof condition === "number"
        ? records.length >= condition
        : records.some((record) => condition(record, records));
    return new Promise<SentRecord[]>((resolve, reject) => {
      const watcher: Watcher = {
        check: () => {
          const records = relevant();
          if (!holds(records)) return false;
          finish();
          resolve(records);
          return true;
        },
      };
      const finish = (): void => {
        clearTimeout(timer);
        this.watchers.delete(watcher);
      };
      const timer = setTimeout(() => {
        finish();
        const received = this.list(chatId);
        const wanted =
          typeof condition === "number" ? `${condition} record(s)` : "a record matching the predicate";
        const listing = received.length === 0 ? " nothing" : `\n  ${received.map(describe).join("\n  ")}`;
        reject(
          new Error(
            `waitForMessages(chat ${chatId}): expected ${wanted}${options.kind ? ` of kind ${options.kind}` : ""} ` +
              `within ${timeoutMs} ms; received ${received.length}:${listing}`,
          ),
        );
      }, timeoutMs);
      this.watchers.add(watcher);
      watcher.check();
    });
  }
}
