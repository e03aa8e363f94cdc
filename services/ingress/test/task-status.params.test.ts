import type { AgentTrace, Task } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { toastText } from "../src/telegram/handlers/button-toast.ts";
import {
  attachTarget,
  STATUS_TRACE_LIMIT,
  taskStatusParams,
} from "../src/telegram/handlers/task-status.params.ts";

const T0 = new Date("2026-01-01T00:00:00Z");

function task(fields: Partial<Task>): Task {
  return {
    id: 9,
    status: "running",
    title: null,
    repos: [],
    branch: null,
    budgetUsd: null,
    round: 2,
    maxRounds: 3,
    agentSessionId: null,
    agentServerUrl: null,
    ...fields,
  } as Task;
}

function trace(i: number, fields: Partial<AgentTrace> = {}): AgentTrace {
  return {
    agent: `agent-${i}`,
    outcome: "completed",
    startedAt: new Date(T0.getTime() + i * 1_000),
    endedAt: new Date(T0.getTime() + i * 1_000 + 500),
    tokensInput: 10,
    tokensOutput: 5,
    tokensReasoning: 1,
    cost: 0.01,
    sessionId: null,
    serverUrl: null,
    ...fields,
  } as AgentTrace;
}

describe("taskStatusParams", () => {
  it("keeps the latest runs, measures a running one up to now and stands in for a missing title", () => {
    const traces = Array.from({ length: 7 }, (_, i) => trace(i));
    traces.push(trace(7, { endedAt: null }));
    const now = new Date(T0.getTime() + 7_000 + 2_500);
    const params = taskStatusParams(task({}), traces, { runs: 8, tokens: 128, costUsd: 0.08 }, undefined, now);
    expect(params.title).toBe("—");
    expect(params.traces.map((t) => t.agent)).toEqual([
      "agent-3",
      "agent-4",
      "agent-5",
      "agent-6",
      "agent-7",
    ]);
    expect(params.traces).toHaveLength(STATUS_TRACE_LIMIT);
    // The total covers every run, not only the ones listed.
    expect(params).toMatchObject({ totalTokens: 128, totalCostUsd: 0.08, branch: null, budgetUsd: null, live: null });
    expect(params.traces.at(-1)).toEqual({
      agent: "agent-7",
      outcome: "completed",
      durationMs: 2_500,
      tokens: 16,
      costUsd: 0.01,
    });
  });

  it("shows the run in progress and counts what it spent so far in the total", () => {
    const live = { stage: "dev", round: 2, lastTool: "edit", tokens: 40, costUsd: 0.02, serverUrl: "http://h:1", sessionId: "ses_l" };
    const params = taskStatusParams(task({}), [trace(0)], { runs: 1, tokens: 16, costUsd: 0.01 }, live);
    expect(params.live).toEqual({ stage: "dev", round: 2, lastTool: "edit", serverUrl: "http://h:1", sessionId: "ses_l" });
    expect(params.totalTokens).toBe(56);
    expect(params.totalCostUsd).toBeCloseTo(0.03, 9);
  });
});

describe("attachTarget", () => {
  const live = trace(1, { sessionId: "ses_1", serverUrl: "http://127.0.0.1:4096" });

  it("prefers the session stored on the task, else the latest trace with one", () => {
    expect(attachTarget(task({ agentSessionId: "ses_t", agentServerUrl: "http://h:1" }), [live])).toEqual({
      serverUrl: "http://h:1",
      sessionId: "ses_t",
    });
    expect(attachTarget(task({}), [live, trace(2)])).toEqual({
      serverUrl: "http://127.0.0.1:4096",
      sessionId: "ses_1",
    });
  });

  it("has nothing while the task is not being worked on, or no session is known", () => {
    expect(attachTarget(task({ status: "success" }), [live])).toBeNull();
    expect(attachTarget(task({ status: "collecting" }), [live])).toBeNull();
    expect(attachTarget(task({}), [trace(2)])).toBeNull();
  });
});

describe("toastText", () => {
  it("is the catalogue text without markup, in the configured language", () => {
    expect(toastText("en", "task.already-approved", { taskId: 4 })).toMatch(
      /^Task #4 is already approved.*\/status 4\.$/,
    );
    expect(toastText("ru", "task.already-approved", { taskId: 4 })).toMatch(/[а-я]/);
    expect(toastText("en", "task.already-approved", { taskId: 4 })).not.toMatch(/[<>]|&\w+;/);
  });
});
