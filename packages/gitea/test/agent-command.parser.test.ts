import { describe, expect, it } from "vitest";
import { agentUsage, looksLikeAgentCommand, parseAgentComment, parseBudgetIncrement } from "../src/index.ts";

describe("parseAgentComment", () => {
  it("reads the command and the message from the first line and the lines after it", () => {
    expect(parseAgentComment("/agent plan keep it small\nand tested", "issue")).toEqual({
      kind: "command",
      command: "plan",
      message: "keep it small\nand tested",
    });
    expect(parseAgentComment("  /Agent IMPLEMENT\r\n", "issue")).toEqual({
      kind: "command",
      command: "implement",
      message: "",
    });
    expect(parseAgentComment("/agent fix the flaky test", "pr")).toEqual({
      kind: "command",
      command: "fix",
      message: "the flaky test",
    });
  });

  it("ignores comments whose first line is not /agent", () => {
    for (const body of ["please /agent plan", "hello\n/agent plan", "/agents plan", "/agentplan", ""]) {
      expect(parseAgentComment(body, "issue")).toEqual({ kind: "not-a-command" });
      expect(looksLikeAgentCommand(body)).toBe(false);
    }
    expect(looksLikeAgentCommand("/agent\n")).toBe(true);
  });

  it("answers unknown, missing and misplaced subcommands with the usage", () => {
    expect(parseAgentComment("/agent deploy now", "issue")).toEqual({ kind: "usage", given: "deploy" });
    expect(parseAgentComment("/agent", "issue")).toEqual({ kind: "usage", given: "" });
    expect(parseAgentComment("/agent fix it", "issue")).toEqual({ kind: "usage", given: "fix" });
    expect(parseAgentComment("/agent plan", "pr")).toEqual({ kind: "usage", given: "plan" });
    expect(parseAgentComment("/agent status", "pr")).toMatchObject({ kind: "command", command: "status" });
    expect(agentUsage("issue")).toContain("/agent implement");
    expect(agentUsage("pr")).toContain("/agent fix");
  });
});

describe("/agent continue and /agent stop (a budget pause, P5)", () => {
  it("are commands on issues and PRs alike, listed in the usage", () => {
    for (const target of ["issue", "pr"] as const) {
      expect(parseAgentComment("/agent continue +2", target)).toEqual({ kind: "command", command: "continue", message: "+2" });
      expect(parseAgentComment("/agent stop", target)).toEqual({ kind: "command", command: "stop", message: "" });
      expect(agentUsage(target)).toContain("/agent continue [+USD]");
      expect(agentUsage(target)).toContain("/agent stop");
    }
  });

  it("reads the amount in dollars, or none", () => {
    expect(parseBudgetIncrement("")).toEqual({ ok: true, usd: undefined });
    for (const [given, usd] of [["+2", 2], ["2", 2], ["$2.50", 2.5], ["+$0.5", 0.5], ["+ 1,25", 1.25], ["3 usd", 3]] as const) {
      expect(parseBudgetIncrement(given)).toEqual({ ok: true, usd });
    }
    expect(parseBudgetIncrement("+5\nthanks")).toEqual({ ok: true, usd: 5 });
    for (const given of ["-2", "0", "+0", "lots", "2 euros", "1e9"]) {
      expect(parseBudgetIncrement(given)).toEqual({ ok: false, given });
    }
  });
});
