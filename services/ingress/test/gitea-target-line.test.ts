import { createRepositories, type Repositories } from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runningCommands, startableHead, waitingLines, waitingPlaces } from "../src/gitea/intake/target-line.ts";

let database: TestDatabase;
let repos: Repositories;
let comment = 1;
beforeAll(async () => {
  database = await createTestDatabase();
  repos = createRepositories(database.db.prisma);
});
afterAll(async () => {
  await database?.drop();
});

const command = async (targetNumber: number, kind: "implement" | "status" = "implement") =>
  (
    await repos.tasks.createGiteaTask({
      repoOwner: "acme",
      repoName: "line",
      targetType: "issue",
      targetNumber,
      commandKind: kind,
      requesterLogin: "alice",
      commentId: comment++,
      maxRounds: 3,
    })
  ).id;
const authorize = (id: number) => repos.applyTransition(id, { type: "command.authorized" });
const places = async (key: string, fromId?: number) =>
  (await waitingPlaces(database.db.pool, key, fromId)).map((p) => [p.id, p.pos]);

describe("an issue's line, read in Postgres", () => {
  it("starts the oldest queued command only when nothing runs and nothing ahead awaits authorization", async () => {
    const key = "acme/line#1";
    const [a, b] = [await command(1), await command(1)];
    await authorize(b);
    // a still awaits authorization: b may not overtake it.
    expect(await startableHead(database.db.pool, key)).toBeUndefined();
    await authorize(a);
    expect(await startableHead(database.db.pool, key)).toBe(a);
    await repos.applyTransition(a, { type: "command.started" });
    expect(await startableHead(database.db.pool, key)).toBeUndefined();
    await repos.applyTransition(a, { type: "user.cancelled" });
    expect(await startableHead(database.db.pool, key)).toBe(b);
    // Another issue's line and control commands are not this line.
    await command(2);
    await command(1, "status");
    expect(await startableHead(database.db.pool, key)).toBe(b);
  });

  it("gives each waiting command its place, and for a command that joined, only it and those behind it", async () => {
    const key = "acme/line#3";
    const [a, b, c, d] = [await command(3), await command(3), await command(3), await command(3)];
    await authorize(a);
    await authorize(c);
    await authorize(d);
    expect(await places(key)).toEqual([[a, 1], [c, 2], [d, 3]]);
    // b is authorized after c and d: it joins ahead of them, so they move back one place.
    await authorize(b);
    expect(await places(key, b)).toEqual([[b, 2], [c, 3], [d, 4]]);
    // d joined last: only its own place.
    expect(await places(key, d)).toEqual([[d, 4]]);
    await repos.applyTransition(a, { type: "user.cancelled" });
    expect(await places(key)).toEqual([[b, 1], [c, 2], [d, 3]]);
  });

  it("lists the lines where a command waits, by their oldest waiting command, and counts what runs", async () => {
    const mine = new Set(["acme/line#11", "acme/line#12", "acme/line#13"]);
    const lines = async () => (await waitingLines(database.db.pool, 200)).filter((k) => mine.has(k));
    const [a, b, c] = [await command(11), await command(12), await command(11)];
    const d = await command(13);
    expect(await lines()).toEqual([]);
    await authorize(c);
    await authorize(b);
    // #12's b came before #11's c (a, ahead of c, awaits authorization); #13's d has not joined a line yet.
    expect(await lines()).toEqual(["acme/line#12", "acme/line#11"]);
    await authorize(a);
    await authorize(d);
    // a is the oldest waiting command of all: #11 goes first now.
    expect(await lines()).toEqual(["acme/line#11", "acme/line#12", "acme/line#13"]);
    const running = await runningCommands(database.db.pool);
    await repos.applyTransition(a, { type: "command.started" });
    await repos.applyTransition(b, { type: "command.started" });
    // a started but c still waits in #11; #12 has no one waiting any more.
    expect(await lines()).toEqual(["acme/line#11", "acme/line#13"]);
    expect(await runningCommands(database.db.pool)).toBe(running + 2);
    expect(await waitingLines(database.db.pool, 1)).toHaveLength(1);
  });
});
