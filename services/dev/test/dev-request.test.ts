import type { Task } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { devRequestOf } from "../src/request/dev-request.ts";

function task(over: Partial<Task>): Task {
  return {
    id: 12, source: "telegram", title: "Add a greeting", goal: "say hello", why: null, acceptanceCriteria: ["greets"],
    repos: ["acme/a", "acme/b"], branch: null, maxRounds: 3, commandKind: null, targetType: null, targetKey: null,
    repoOwner: null, repoName: null, targetNumber: null, requesterLogin: null, commandMessage: null, ...over,
  } as Task;
}

const context = { round: 1, workspaces: ["- acme/a: ./acme/a (branch x)"], findings: [] };

describe("the request a dev round works from, whichever door it came through", () => {
  it("takes an approved draft: all its repositories, a branch from its title, the draft in the prompt", () => {
    const request = devRequestOf(task({}));
    expect(request).toMatchObject({ workTaskId: 12, repos: ["acme/a", "acme/b"], maxRounds: 3, followsPlan: false, oneShot: false });
    expect(request.branch).toMatch(/^ratatoskr\/12-/);
    expect(request.sessionTaskId).toBeUndefined();
    expect(request.commit(2)).toEqual({ message: "Add a greeting\n\nratatoskr task #12, round 2", trailer: "ratatoskr task #12, round 2" });
    expect(request.prompt(context)).toContain("Task #12, round 1 of at most 3");
  });

  const command = { source: "gitea", repos: ["acme/shop"], repoOwner: "acme", repoName: "shop", requesterLogin: "alice", commandMessage: "please" };

  it("takes an implement command: its issue's branch, the reviewed plan, `agent:` commits", () => {
    const request = devRequestOf(task({ ...command, commandKind: "implement", targetType: "issue", targetNumber: 3, branch: "agent/issue-3-12" }));
    expect(request).toMatchObject({ workTaskId: 12, branch: "agent/issue-3-12", repos: ["acme/shop"], followsPlan: true, oneShot: false });
    expect(request.commit(1).message).toBe("agent: Add a greeting\n\nratatoskr command #12, round 1");
    expect(request.prompt({ ...context, plan: "1. write it" })).toContain("1. write it");
  });

  it("makes a fix one shot, one round, delivered by the dev round itself", () => {
    const request = devRequestOf(task({ ...command, commandKind: "fix", targetType: "pr", targetNumber: 8, branch: "feature" }));
    expect(request).toMatchObject({ oneShot: true, maxRounds: 1, branch: "feature" });
    expect(request.commit(1).message).toMatch(/^agent: fix Add a greeting/);
  });

  it("works a PR iterate in the tree and sessions of the implement command that opened the PR", () => {
    const request = devRequestOf(task({ ...command, commandKind: "iterate", targetType: "pr", targetNumber: 9, branch: "agent/issue-3-7" }));
    expect(request).toMatchObject({ workTaskId: 7, sessionTaskId: 7, branch: "agent/issue-3-7" });
  });
});
