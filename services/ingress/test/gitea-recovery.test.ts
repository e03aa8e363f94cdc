import { GiteaClient, runHeartbeatKey } from "@ratatoskr/gitea";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { IntakeDeps } from "../src/gitea/intake/intake-deps.ts";
import { failOrphanedRuns } from "../src/gitea/intake/running-recovery.ts";
import { GiteaHarness, REPO } from "./support/gitea-harness.ts";

let h: GiteaHarness;

beforeAll(async () => {
  h = await GiteaHarness.start({ GITEA_MAX_RUNNING: "4" });
});
afterAll(async () => {
  await h?.stop();
});

function deps(interrupt: IntakeDeps["interrupt"]): IntakeDeps {
  const ctx = h.host.context;
  return {
    repos: ctx.repos,
    db: ctx.db,
    queues: ctx.queues,
    gitea: new GiteaClient({ baseUrl: h.gitea.url, token: h.gitea.token }),
    transition: (taskId, event, options) => ctx.transition(taskId, event, options),
    interrupt,
    maxRunning: 4,
    budgetUsd: null,
    logger: ctx.logger,
  };
}

async function runningCommand(title: string, midTurn: boolean, agent = "planner") {
  const number = h.gitea.addIssue(REPO, title).number!;
  const task = await h.command(number, "/agent plan");
  await h.waitForStatus(task.id, "running");
  if (midTurn) {
    await h.prisma.agentTrace.create({
      data: { taskId: task.id, agent, prompt: "p", outcome: "running", sessionId: `ses_${task.id}`, serverUrl: "http://127.0.0.1:1", startedAt: new Date() },
    });
    await h.prisma.task.update({ where: { id: task.id }, data: { agentSessionId: `ses_${task.id}`, agentServerUrl: "http://127.0.0.1:1" } });
  }
  return task;
}

describe("restart recovery (G6)", () => {
  it("fails only a command found mid-turn without a live heartbeat, and interrupts its session", async () => {
    const between = await runningCommand("Between steps", false);
    const orphan = await runningCommand("Orphaned", true);
    const alive = await runningCommand("Still alive", true);
    await h.host.context.redis.set(runHeartbeatKey(h.redis.prefix, alive.id), "1", "PX", 60_000);
    const interrupt = vi.fn(async () => undefined);

    const failed = await failOrphanedRuns(deps(interrupt), h.host.context.redis, h.redis.prefix, { now: Date.now() + 120_000 });

    expect(failed).toEqual([orphan.id]);
    expect(interrupt).toHaveBeenCalledWith("http://127.0.0.1:1", `ses_${orphan.id}`);
    expect(interrupt).toHaveBeenCalledTimes(1);
    const after = await h.prisma.task.findMany({ where: { id: { in: [between.id, orphan.id, alive.id] } }, orderBy: { id: "asc" } });
    expect(after.map((t) => t.status)).toEqual(["running", "failed", "running"]);
    expect(after[1]!.failureReason).toMatch(/mid-turn.*not replayed/);
  });

  it("fails nothing when the run reports back between the recovery's look and its write (23.1)", async () => {
    const healthy = await runningCommand("Reports back meanwhile", true);
    const interrupt = vi.fn(async () => undefined);
    const racing = deps(interrupt);
    const write = racing.transition;
    racing.transition = async (taskId, event, options) => {
      // The planner's run ends and reports its plan just before the recovery writes.
      await h.prisma.agentTrace.updateMany({ where: { taskId }, data: { endedAt: new Date(), outcome: "completed" } });
      await h.host.context.transition(taskId, { type: "plan.drafted", plan: "1. add the endpoint" });
      return write(taskId, event, options);
    };

    expect(await failOrphanedRuns(racing, h.host.context.redis, h.redis.prefix, { now: Date.now() + 120_000 })).toEqual([]);
    const after = await h.prisma.task.findUniqueOrThrow({ where: { id: healthy.id } });
    expect(after.status).toBe("running");
    expect(after.failureReason).toBeNull();
    expect(interrupt).not.toHaveBeenCalled();
  });

  it("leaves a command alone inside the grace period after it started", async () => {
    const fresh = await runningCommand("Just started", true);
    const interrupt = vi.fn(async () => undefined);
    expect(await failOrphanedRuns(deps(interrupt), h.host.context.redis, h.redis.prefix)).toEqual([]);
    expect((await h.prisma.task.findUniqueOrThrow({ where: { id: fresh.id } })).status).toBe("running");
    expect(interrupt).not.toHaveBeenCalled();
  });

  it("leaves a dev run cut off mid-turn to its job's retry, which resumes its session as on every door", async () => {
    // The cases before leave commands running: they end here, so this one gets a running slot.
    for (const left of await h.prisma.task.findMany({ where: { status: "running" } })) await h.host.context.transition(left.id, { type: "user.cancelled" });
    const cut = await runningCommand("Dev cut off", true, "dev");
    const interrupt = vi.fn(async () => undefined);
    expect(await failOrphanedRuns(deps(interrupt), h.host.context.redis, h.redis.prefix, { now: Date.now() + 120_000 })).toEqual([]);
    expect((await h.prisma.task.findUniqueOrThrow({ where: { id: cut.id } })).status).toBe("running");
    expect(interrupt).not.toHaveBeenCalled();
  });
});
