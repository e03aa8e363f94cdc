import { describe, expect, it } from "vitest";
import { statementName } from "../src/sql/statement-name.ts";

describe("prepared statement names", () => {
  it("keeps a name that fits Postgres' 63 bytes as it is", () => {
    expect(statementName("rt-transition", "goal,title")).toBe("rt-transition:goal,title");
  });

  it("gives long shapes that differ only past 63 bytes different names of at most 63 bytes", () => {
    const common = "acceptanceCriteria,agentServerUrl,agentSessionId,branch,failureReason,goal";
    const a = statementName("rt-transition-skip-locked", `${common},title,why`);
    const b = statementName("rt-transition-skip-locked", `${common},title,whz`);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(63);
    expect(Buffer.byteLength(b)).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(a.startsWith("rt-transition-skip-locked#")).toBe(true);
    expect(statementName("rt-transition-skip-locked", `${common},title,why`)).toBe(a);
  });

  it("names every subset of a dozen columns apart", () => {
    const columns = [
      "acceptanceCriteria",
      "agentServerUrl",
      "agentSessionId",
      "branch",
      "failureReason",
      "goal",
      "locale",
      "prUrl",
      "repos",
      "resultText",
      "statusCommentId",
      "title",
      "why",
    ];
    const seen = new Set<string>();
    for (let mask = 0; mask < 1 << columns.length; mask++) {
      const shape = columns.filter((_, i) => mask & (1 << i)).join(",");
      const name = statementName("rt-transition-skip-locked", shape);
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
      seen.add(name);
    }
    expect(seen.size).toBe(1 << columns.length);
  });
});
