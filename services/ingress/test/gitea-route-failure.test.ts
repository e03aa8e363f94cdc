import { GiteaClient } from "@ratatoskr/gitea";
import type { JobContext } from "@ratatoskr/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntakeHandler } from "../src/gitea/intake/intake.handler.ts";
import type { IntakeDeps } from "../src/gitea/intake/intake-deps.ts";
import { GiteaHarness, REPO } from "./support/gitea-harness.ts";

/**
 * A command whose authorization Gitea never answers is turned away saying why (never left
 * `received`, where it would also hold up every command behind it in its line).
 */
let h: GiteaHarness;

beforeAll(async () => {
  h = await GiteaHarness.start();
});
afterAll(async () => {
  await h?.stop();
});

/** The intake handler over a Gitea that refuses connections, one try per call. */
function handlerOverDeadGitea() {
  const ctx = h.host.context;
  const deps: IntakeDeps = {
    repos: ctx.repos,
    db: ctx.db,
    queues: ctx.queues,
    gitea: new GiteaClient({ baseUrl: "http://127.0.0.1:9", token: "t", retry: { maxRetries: 0 } }),
    transition: (taskId, event, options) => ctx.transition(taskId, event, options),
    interrupt: async () => undefined,
    maxRunning: 5,
    budgetUsd: null,
    logger: ctx.logger,
  };
  return createIntakeHandler(deps, async () => ({ settled: 0 }));
}

const attempt = (attemptsMade: number) => ({ job: { attemptsMade, opts: { attempts: 5 } } }) as unknown as JobContext<"intake">;

describe("a Gitea command whose authorization Gitea never answers", () => {
  it("stays received while attempts are left, and is turned away saying why on the last", async () => {
    const n = h.gitea.addIssue(REPO, "Gitea away").number!;
    const task = await h.storedCommand(n, 900_001);
    const route = handlerOverDeadGitea();
    await expect(route({ v: 1, kind: "route-command", taskId: task.id }, attempt(0))).rejects.toThrow(/could not be reached/);
    expect((await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe("received");

    await expect(route({ v: 1, kind: "route-command", taskId: task.id }, attempt(4))).rejects.toThrow(/could not be reached/);
    const rejected = await h.waitForStatus(task.id, "rejected");
    expect(rejected.failureReason).toMatch(/^the command could not be checked with Gitea: Gitea repoGetRepoPermissions \(acme\/web for alice\) could not be reached/);
    expect(rejected.failureReason).toContain("Post it again once Gitea answers.");
    expect(rejected.failureReason).not.toContain("token");
  });

  it("is turned away on its first try when Gitea refuses the read for good (no retries), and the issue takes commands after it", async () => {
    const n = h.gitea.addIssue(REPO, "Issue hidden").number!;
    h.gitea.injectFault({ method: "GET", path: new RegExp(`/issues/${n}$`), status: 404 });
    const gone = await h.command(n, "/agent plan");
    const seen = Date.now();
    await h.waitForStatusComment(n, gone.id, "🚫 rejected", "could not be checked with Gitea", "answered 404");
    // A retry would come after the first back-off (5 s).
    expect(Date.now() - seen).toBeLessThan(4_000);
    const next = await h.command(n, "/agent discuss");
    await h.waitForStatus(next.id, "running");
    await h.transition(next.id, { type: "run.succeeded" });
  });
});
