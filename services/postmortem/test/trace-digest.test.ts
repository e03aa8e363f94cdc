import { describe, expect, it } from "vitest";
import { digestTraces, trimMiddle, type TraceForDigest } from "../src/prompt/trace-digest.ts";

let nextId = 1;
function trace(over: Partial<TraceForDigest>): TraceForDigest {
  const startedAt = new Date("2026-11-30T12:00:00Z");
  return {
    id: nextId++,
    agent: "dev",
    round: 1,
    outcome: "completed",
    prompt: "p",
    output: "o",
    error: null,
    model: "fake/scripted",
    tokensInput: 10,
    tokensOutput: 5,
    tokensReasoning: 0,
    cost: 0.001,
    startedAt,
    endedAt: new Date(startedAt.getTime() + 30_000),
    ...over,
  };
}

describe("trimMiddle", () => {
  it("keeps short texts and cuts long ones in the middle within the limit", () => {
    expect(trimMiddle("short", 100)).toBe("short");
    const long = `HEAD${"m".repeat(10_000)}TAIL`;
    const cut = trimMiddle(long, 500);
    expect(cut.length).toBeLessThanOrEqual(500);
    expect(cut.startsWith("HEAD")).toBe(true);
    expect(cut.endsWith("TAIL")).toBe(true);
    expect(cut).toMatch(/characters cut/);
  });
});

describe("digestTraces", () => {
  it("keeps every run's header and stays within the budget however many and large the runs are", () => {
    const traces = Array.from({ length: 30 }, (_, i) => trace({ prompt: `prompt ${i} ${"p".repeat(5_000)}`, output: `output ${i} ${"o".repeat(20_000)} end ${i}` }));
    const digest = digestTraces(traces, 8_000);
    const headers = digest.match(/^### run \d+: dev/gm) ?? [];
    expect(headers).toHaveLength(30);
    // Bodies within the budget; headers and labels are a small fixed overhead per run.
    expect(digest.length).toBeLessThan(8_000 + 30 * 200);
    // The newest run gets the most: its end is there.
    expect(digest).toContain("end 29");
    expect(digest).toContain("(prompt and output left out: over the budget)");
  });

  it("shows small runs whole, with outcome, duration, tokens, cost and error", () => {
    const digest = digestTraces([trace({ outcome: "timeout", error: "idle timeout after 300000 ms", prompt: "do it", output: "" })], 10_000);
    expect(digest).toContain("outcome timeout");
    expect(digest).toContain("30s");
    expect(digest).toContain("tokens 15");
    expect(digest).toContain("cost $0.0010");
    expect(digest).toContain("error: idle timeout after 300000 ms");
    expect(digest).toContain("prompt:\ndo it\noutput:\n(none)");
  });

  it("says so when there were no runs", () => {
    expect(digestTraces([], 1_000)).toBe("(no agent runs were recorded)");
  });
});
