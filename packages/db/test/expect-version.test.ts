import { IllegalTransitionError } from "@ratatoskr/contracts";
import type { ApplyTransitionOptions } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { useTestRepositories } from "./support/test-repositories.ts";

/**
 * `expectVersion` (issue 23.1): a repair's write lands only while the task is at the version the
 * repair judged it at, on each path a transition can take: the plain-SQL statement (fresh or on a
 * row this process remembers) and the Prisma transaction (writes alongside).
 */
const db = useTestRepositories();

const paths: Array<[string, ApplyTransitionOptions]> = [
  ["plain SQL", {}],
  ["Prisma transaction", { alongside: async () => undefined }],
];

async function collecting() {
  const task = await db.repos.tasks.createTelegramTask({ chatId: 42, maxTurns: 5, maxRounds: 3 });
  const applied = await db.repos.applyTransition(task.id, { type: "turn.received" });
  return applied.task;
}

describe("a conditional transition (expectVersion)", () => {
  for (const [name, options] of paths) {
    it(`${name}: writes at the expected version, and nothing once the task moved on`, async () => {
      const task = await collecting();
      // The task moves on after the repair looked (this process remembers the newer row).
      await db.repos.applyTransition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
      const refused = db.repos.applyTransition(task.id, { type: "user.cancelled" }, { ...options, expectVersion: task.version });
      await expect(refused).rejects.toBeInstanceOf(IllegalTransitionError);
      await expect(refused).rejects.toMatchObject({ refusal: { reason: "moved-on", event: "user.cancelled" } });
      const after = await db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      expect(after).toMatchObject({ status: "ready", version: task.version + 1 });
      expect(await db.prisma.taskEvent.count({ where: { taskId: task.id, type: "user.cancelled" } })).toBe(0);

      const applied = await db.repos.applyTransition(task.id, { type: "user.cancelled" }, { ...options, expectVersion: after.version });
      expect(applied.task).toMatchObject({ status: "cancelled", version: after.version + 1 });
    });
  }

  it("plain SQL: refuses on a row this process remembers as current while another process moved it", async () => {
    const task = await collecting();
    // Another process's write: the version moves behind this process's remembered row.
    await db.prisma.$executeRaw`UPDATE tasks SET version = version + 1 WHERE id = ${task.id}`;
    const refused = db.repos.applyTransition(task.id, { type: "user.cancelled" }, { expectVersion: task.version });
    await expect(refused).rejects.toMatchObject({ refusal: { reason: "moved-on" } });
    expect((await db.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe("collecting");
  });
});
