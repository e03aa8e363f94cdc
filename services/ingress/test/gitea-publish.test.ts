import type { Task } from "@ratatoskr/db";
import type { PullRequest } from "@ratatoskr/gitea";
import { describe, expect, it } from "vitest";
import { blockingAgentPull, implementBranch, implementTaskOfBranch } from "../src/gitea/intake/prepare-work.ts";
import { pullRequestBody } from "../src/gitea/intake/publish-command.ts";

const pull = (ref: string, state: "open" | "closed", merged = false) => ({ number: 1, head: { ref }, state, merged }) as PullRequest;

describe("agent PRs of an issue (G3)", () => {
  it("names the branch after the issue and the command, and reads the command back from it", () => {
    expect(implementBranch(12, 345)).toBe("agent/issue-12-345");
    expect(implementTaskOfBranch("agent/issue-12-345")).toBe(345);
    expect(implementTaskOfBranch("feature/x")).toBeUndefined();
    expect(implementTaskOfBranch("agent/issue-12-345-extra")).toBeUndefined();
  });

  it("refuses implement while an agent PR of the issue is open or merged, not when closed unmerged or of another issue", () => {
    expect(blockingAgentPull([pull("agent/issue-12-3", "open")], 12)).toBeDefined();
    expect(blockingAgentPull([pull("agent/issue-12-3", "closed", true)], 12)).toBeDefined();
    expect(blockingAgentPull([pull("agent/issue-12-3", "closed")], 12)).toBeUndefined();
    expect(blockingAgentPull([pull("agent/issue-120-3", "open"), pull("feature/12", "open")], 12)).toBeUndefined();
  });

  it("describes the PR: closes the issue, the summary, the checks and the minor findings left", () => {
    const task = { id: 7, targetNumber: 12, requesterLogin: "alice", round: 2 } as Task;
    const body = pullRequestBody(task, [
      { type: "dev.finished", payload: { type: "dev.finished", commit: "a", summary: "old" } },
      { type: "dev.finished", payload: { type: "dev.finished", commit: "b", summary: "added x", testsRun: "pnpm test" } },
      { type: "review.passed", payload: { type: "review.passed", minor: [{ severity: "minor", file: "x.ts", line: 2, text: "rename" }] } },
    ]);
    expect(body.split("\n")[0]).toBe("Closes #12");
    expect(body).toContain("@alice");
    expect(body).toContain("reviewed in 2 rounds");
    expect(body).toContain("## Summary\nadded x");
    expect(body).not.toContain("old");
    expect(body).toContain("## Checks the agent ran\npnpm test");
    expect(body).toContain("- [minor] x.ts:2 — rename");
  });

  it("says so when the agent reported no checks and the review left nothing", () => {
    const body = pullRequestBody({ id: 7, targetNumber: 3, requesterLogin: "bob", round: 1 } as Task, []);
    expect(body).toContain("(none reported)");
    expect(body).not.toContain("minor findings");
  });
});
