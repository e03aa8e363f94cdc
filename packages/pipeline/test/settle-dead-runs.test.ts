import type { AgentTrace } from "@ratatoskr/db";
import type { Logger } from "@ratatoskr/runtime";
import { describe, expect, it } from "vitest";
import { resumeOptions, settleDeadRuns, type TracedRunDeps } from "../src/run/traced-run.ts";

const A = "http://127.0.0.1:4096";
const B = "http://127.0.0.1:4097";

function dead(id: number, sessionId: string | null, serverUrl: string | null): AgentTrace {
  return { id, sessionId, serverUrl } as AgentTrace;
}

function deps(unfinished: AgentTrace[]) {
  const interrupted: Array<[string, string | undefined]> = [];
  const closed: number[] = [];
  const warnings: string[] = [];
  const d = {
    traces: {
      listUnfinished: async () => unfinished,
      markInterrupted: async (id: number) => void closed.push(id),
    },
    opencode: {
      serverUrls: [A, B],
      interrupt: async (sessionId: string, serverUrl?: string) => void interrupted.push([sessionId, serverUrl]),
    },
    logger: { warn: (_: unknown, message: string) => void warnings.push(message) } as unknown as Logger,
  } as unknown as TracedRunDeps;
  return { d, interrupted, closed, warnings };
}

describe("settleDeadRuns over a pool of servers", () => {
  it("interrupts a dead run's session on its own server and resumes it there, not on the first server", async () => {
    const { d, interrupted, closed } = deps([dead(2, "ses_new", `${B}/`), dead(1, "ses_old", A)]);
    expect(await settleDeadRuns(d, 1, "dev")).toEqual({ resumeSessionId: "ses_new", resumeServerUrl: B });
    expect(interrupted).toEqual([
      ["ses_new", B],
      ["ses_old", A],
    ]);
    expect(closed).toEqual([2, 1]);
  });

  it("leaves a session on a server this process does not use to that server, and opens a new one", async () => {
    const { d, interrupted, closed, warnings } = deps([dead(3, "ses_far", "http://10.0.0.9:4096")]);
    expect(await settleDeadRuns(d, 1, "dev")).toEqual({ resumeSessionId: undefined, resumeServerUrl: undefined });
    expect(interrupted).toEqual([]);
    expect(closed).toEqual([3]);
    expect(warnings[0]).toMatch(/does not use/);
  });

  it("resumes a trace without a server (older rows) wherever the pool finds it", async () => {
    const { d, interrupted } = deps([dead(4, "ses_x", null)]);
    expect(await settleDeadRuns(d, 1, "dev")).toEqual({ resumeSessionId: "ses_x", resumeServerUrl: undefined });
    expect(interrupted).toEqual([["ses_x", undefined]]);
  });
});

describe("resumeOptions", () => {
  it("names the session and its server, or nothing without a session", () => {
    expect(resumeOptions("ses_1", B)).toEqual({ sessionId: "ses_1", serverUrl: B });
    expect(resumeOptions("ses_1", null)).toEqual({ sessionId: "ses_1" });
    expect(resumeOptions(null, B)).toEqual({});
  });
});
