import { createRepositories, type Repositories, type TelegramUpdateRepository } from "@ratatoskr/db";
import { createLogger } from "@ratatoskr/runtime";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { UpdateInbox } from "../src/telegram/delivery/update-inbox.ts";

/**
 * Many chats worked off side by side share their claims and done marks (issue 7 item 2): the
 * handling behind the webhook costs a few statements per round, not two per update, so it leaves
 * Postgres and the event loop to intake. Order per chat and once-only stay as they were.
 */
const logger = createLogger({ service: "inbox-batching-test", level: "silent" });
let database: TestDatabase;
let repos: Repositories;

beforeAll(async () => {
  database = await createTestDatabase();
  repos = createRepositories(database.db.prisma);
});
afterAll(async () => {
  await database?.drop();
});

const payload = (updateId: number, chatId: number) =>
  JSON.stringify({ update_id: updateId, message: { message_id: 1, chat: { id: chatId }, text: "hi" } });

/** The repository, counting the statements the inbox sends through it (any method). */
function counted(store: TelegramUpdateRepository) {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { proxy, calls };
}

describe("telegram inbox batching", () => {
  it("works off 40 chats with a few shared statements, each update once and in chat order", async () => {
    const chats = Array.from({ length: 40 }, (_, i) => 9_100 + i);
    let id = 9_000;
    const stored = chats.flatMap((chatId) =>
      [0, 1].map(() => ({ updateId: ++id, chatId, payload: payload(id, chatId) })),
    );
    await repos.telegramUpdates.accept(stored);
    const { proxy, calls } = counted(repos.telegramUpdates);
    const handled: Array<{ chatId: number; updateId: number }> = [];
    const inbox = new UpdateInbox({
      store: proxy,
      logger,
      handle: async (body) => {
        const update = body as { update_id: number; message: { chat: { id: number } } };
        handled.push({ chatId: update.message.chat.id, updateId: update.update_id });
      },
    });
    for (const chatId of chats) inbox.kick({ chatId });
    await vi.waitFor(() => expect(handled).toHaveLength(stored.length), { timeout: 10_000 });
    await inbox.stop();

    expect(new Set(handled.map((h) => h.updateId)).size).toBe(stored.length);
    for (const chatId of chats) {
      const own = handled.filter((h) => h.chatId === chatId).map((h) => h.updateId);
      expect(own).toEqual([...own].sort((a, b) => a - b));
    }
    // One claim round, one finish-and-claim round per update of a chat, one to find none left:
    // a handful of statements for 80 updates (one at a time per chat took 2 per update, 160).
    expect(calls.length).toBeLessThanOrEqual(12);
    const pending = await repos.telegramUpdates.pendingCount();
    expect(pending).toBe(0);
  });

  it("handles at most the configured number of updates at once, however many chats wait", async () => {
    const chats = Array.from({ length: 20 }, (_, i) => 9_300 + i);
    await repos.telegramUpdates.accept(
      chats.map((chatId, i) => ({ updateId: 9_500 + i, chatId, payload: payload(9_500 + i, chatId) })),
    );
    let running = 0;
    let most = 0;
    let done = 0;
    const inbox = new UpdateInbox({
      store: repos.telegramUpdates,
      logger,
      maxConcurrentHandling: 3,
      handle: async () => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        done++;
      },
    });
    for (const chatId of chats) inbox.kick({ chatId });
    await vi.waitFor(() => expect(done).toBe(chats.length), { timeout: 10_000 });
    await inbox.stop();
    expect(most).toBe(3);
  });
});
