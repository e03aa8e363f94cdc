import { describe, expect, it } from "vitest";
import { boundedStringify, JobPayloadError, MAX_INPUT_DEPTH, nestedDeeperThan, parseJobData } from "../src/index.ts";

const nested = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`);

describe("input depth", () => {
  it("measures depth without recursing, however deep the input", () => {
    expect(nestedDeeperThan(nested(MAX_INPUT_DEPTH))).toBe(false);
    expect(nestedDeeperThan(nested(MAX_INPUT_DEPTH + 1))).toBe(true);
    expect(nestedDeeperThan(nested(1_000_000))).toBe(true);
    expect(nestedDeeperThan({ a: [1, { b: "x" }], c: null })).toBe(false);
    expect(boundedStringify(nested(100_000))).toBeUndefined();
    expect(boundedStringify({ a: [1] })).toBe('{"a":[1]}');
  });

  it("refuses a job payload nested 5,000 levels deep as a payload error, not a crash", () => {
    const data = { v: 1, kind: "route-command", taskId: 1, extra: nested(5_000) };
    expect(() => parseJobData("intake", data)).toThrow(JobPayloadError);
    expect(() => parseJobData("intake", data)).toThrow(/nested deeper than 64 levels/);
  });
});
