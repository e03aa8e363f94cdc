import { createDatabase } from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CommandRefusedError,
  createCommandAcceptor,
  type IncomingCommand,
} from "../src/gitea/store/command-acceptor.ts";
import { drainCommands } from "../src/gitea/store/command-inbox.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

const command = (commentId: number, over: Partial<IncomingCommand> = {}): IncomingCommand => ({
  owner: "acme",
  repo: "web",
  target: "issue",
  number: 1,
  commentId,
  author: "alice",
  kind: "discuss",
  message: `comment ${commentId}`,
  deliveryId: `d-${commentId}`,
  event: "issue_comment",
  ...over,
});

describe("the Gitea command acceptor (group commit)", () => {
  it("stores the neighbours of a command Postgres refuses, and refuses only that one, with its reason", async () => {
    const accept = createCommandAcceptor(database.db.pool, 3);
    const good = [700_001, 700_002, 700_003, 700_004];
    // Sent together, so they share written batches with the poison ones.
    const results = await Promise.allSettled([
      ...good.map((id) => accept(command(id))),
      accept(command(700_010, { number: 3_000_000_000 })),
      accept(command(700_011, { message: "nul \u0000 byte" })),
      accept(command(700_001)),
    ]);
    const outcome = (r: PromiseSettledResult<unknown>) =>
      r.status === "fulfilled"
        ? (r.value as { status: string }).status
        : r.reason instanceof CommandRefusedError
          ? `refused ${r.reason.commentId}`
          : `error ${String(r.reason)}`;
    expect(results.map(outcome)).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "accepted",
      "refused 700010",
      "refused 700011",
      "duplicate",
    ]);
    // The tasks are made after the answer, from what was stored.
    await drainCommands(database.db.pool);
    const stored = await database.db.prisma.task.findMany({ where: { commentId: { gte: 700_000n, lt: 710_000n } } });
    expect(stored.map((t) => Number(t.commentId)).sort()).toEqual(good);
    // Each accepted command has its route and status follow-ups, nothing for the refused ones.
    const followUps = await database.db.prisma.followUp.count({ where: { taskId: { in: stored.map((t) => t.id) } } });
    expect(followUps).toBe(good.length * 2);
  });

  it("fails every command of a batch with the outage itself when Postgres is unreachable, refusing none", async () => {
    const away = createDatabase({ connectionString: "postgresql://postgres@127.0.0.1:1/none", schema: "public" });
    try {
      const accept = createCommandAcceptor(away.pool, 3);
      const results = await Promise.allSettled([accept(command(710_001)), accept(command(710_002))]);
      for (const r of results) {
        expect(r.status).toBe("rejected");
        expect((r as PromiseRejectedResult).reason).not.toBeInstanceOf(CommandRefusedError);
      }
    } finally {
      await away.close();
    }
  });

  it("makes each stored comment one task, in the order stored, however many drains run at once", async () => {
    const accept = createCommandAcceptor(database.db.pool, 3);
    const ids = Array.from({ length: 250 }, (_, i) => 720_000 + i);
    for (const id of ids) await accept(command(id, { number: 7 }));
    const drains = await Promise.all([1, 2, 3].map(() => drainCommands(database.db.pool)));
    expect(drains.reduce((n, d) => n + d.settled, 0)).toBe(ids.length);
    const tasks = await database.db.prisma.task.findMany({
      where: { commentId: { gte: 720_000n, lt: 730_000n } },
      orderBy: { id: "asc" },
    });
    expect(tasks.map((t) => Number(t.commentId))).toEqual(ids);
    const routes = await database.db.prisma.followUp.count({
      where: { taskId: { in: tasks.map((t) => t.id) }, queue: "intake" },
    });
    expect(routes).toBe(ids.length);
  });
});
