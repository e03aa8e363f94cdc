import { createRepositories, type Repositories } from "@ratatoskr/db";
import { createLogger } from "@ratatoskr/runtime";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { UpdateInbox } from "../src/telegram/delivery/update-inbox.ts";

/**
 * The lease on a claimed update is short, so a replica that died holding it blocks the chat for
 * seconds, and renewed while the update is handled, so a slow handling is never taken over.
 */
const logger = createLogger({ service: "inbox-lease-test", level: "silent" });
const LEASE_MS = 400;
let database: TestDatabase;
let repos: Repositories;

beforeAll(async () => {
  database = await createTestDatabase();
  repos = createRepositories(database.db.prisma);
});
afterAll(async () => {
  await database?.drop();
});

const store = () => repos.telegramUpdates;
const payload = (updateId: number, chatId: number) =>
  JSON.stringify({ update_id: updateId, message: { message_id: 1, chat: { id: chatId }, text: "hi" } });

describe("telegram inbox lease", () => {
  it("keeps an update held while it is handled for many leases, so no other replica takes it", async () => {
    await store().accept([{ updateId: 71, chatId: 7_001, payload: payload(71, 7_001) }]);
    const handled: string[] = [];
    const slow = new UpdateInbox({
      store: store(),
      logger,
      leaseMs: LEASE_MS,
      handle: async () => {
        handled.push("slow");
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 5));
      },
    });
    const other = new UpdateInbox({
      store: store(),
      logger,
      leaseMs: LEASE_MS,
      sweepIntervalMs: 50,
      handle: async () => void handled.push("other"),
    });
    slow.kick({ chatId: 7_001 });
    await vi.waitFor(() => expect(handled).toEqual(["slow"]), { timeout: 10_000 });
    other.start();
    await vi.waitFor(async () => {
      const row = await database.db.prisma.telegramUpdate.findUniqueOrThrow({ where: { updateId: 71n } });
      expect(row.status).toBe("done");
    }, { timeout: 10_000 });
    await Promise.all([slow.stop(), other.stop()]);
    expect(handled).toEqual(["slow"]);
  });

  it("frees an update whose replica died holding it after the lease, not half a minute", async () => {
    await store().accept([{ updateId: 72, chatId: 7_002, payload: payload(72, 7_002) }]);
    // A replica claims it with the default lease and dies (never renews, never settles).
    const dead = new UpdateInbox({ store: store(), logger, handle: () => new Promise(() => undefined) });
    const claimed = await store().claimNext({ chatId: 7_002 }, (dead as unknown as { leaseMs: number }).leaseMs);
    expect(claimed?.updateId).toBe(72);
    const handledAt: number[] = [];
    const diedAt = Date.now();
    const next = new UpdateInbox({
      store: store(),
      logger,
      sweepIntervalMs: 100,
      handle: async () => void handledAt.push(Date.now()),
    });
    next.start();
    await vi.waitFor(() => expect(handledAt).toHaveLength(1), { timeout: 20_000, interval: 100 });
    await next.stop();
    expect(handledAt[0]! - diedAt).toBeLessThanOrEqual(11_000);
  }, 30_000);
});
