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
    await vi.waitFor(
      async () => {
        const row = await database.db.prisma.telegramUpdate.findUniqueOrThrow({ where: { updateId: 71n } });
        expect(row.status).toBe("done");
      },
      { timeout: 10_000 },
    );
    await Promise.all([slow.stop(), other.stop()]);
    expect(handled).toEqual(["slow"]);
  });

  it("frees an update whose replica died holding it after the lease, not half a minute", async () => {
    await store().accept([{ updateId: 72, chatId: 7_002, payload: payload(72, 7_002) }]);
    // A replica claims it with the default lease and dies (never renews, never settles).
    const dead = new UpdateInbox({ store: store(), logger, handle: () => new Promise(() => undefined) });
    const claimed = await store().claimNext(
      { chatId: 7_002 },
      (dead as unknown as { leaseMs: number }).leaseMs,
    );
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

  it("works a chat's backlog off in update order, each once, while another replica holds a second chat", async () => {
    // Stored out of order: the order is the update ids', not the arrival's.
    const ids = [90, 84, 88, 81, 86, 83, 89, 82, 87, 85];
    await store().accept(ids.map((id) => ({ updateId: id, chatId: 7_003, payload: payload(id, 7_003) })));
    await store().accept([{ updateId: 80, chatId: 7_004, payload: payload(80, 7_004) }]);
    const held = await store().claimNext({ chatId: 7_004 }, 60_000);
    const handled: number[] = [];
    const inbox = new UpdateInbox({
      store: store(),
      logger,
      handle: async (body) => void handled.push((body as { update_id: number }).update_id),
    });
    inbox.kick({ chatId: 7_003 });
    inbox.kick({ chatId: 7_004 });
    await vi.waitFor(() => expect(handled).toHaveLength(ids.length), { timeout: 10_000 });
    await inbox.stop();
    expect(handled).toEqual([...ids].sort((a, b) => a - b));
    expect(held?.updateId).toBe(80);
    const rows = await database.db.prisma.telegramUpdate.findMany({
      where: { chatId: { in: [7_003n, 7_004n] } },
    });
    expect(
      rows
        .filter((r) => r.status === "done")
        .map((r) => Number(r.updateId))
        .sort(),
    ).toEqual([...ids].sort((a, b) => a - b));
    expect(rows.find((r) => r.updateId === 80n)?.status).toBe("pending");
  });
});
