import { describe, expect, it } from "vitest";
import { z } from "zod";
import { extractVerdict, jsonCandidates } from "../src/index.ts";

const schema = z.object({ passed: z.boolean(), comments: z.array(z.string()) });

describe("extractVerdict", () => {
  it("reads a bare object", () => {
    expect(extractVerdict('{"passed":true,"comments":[]}', schema)).toEqual({ ok: true, value: { passed: true, comments: [] } });
  });

  it("reads a fenced object surrounded by prose", () => {
    const text = 'Here it is:\n```json\n{"passed": false, "comments": ["a } brace in a string"]}\n```\nThanks.';
    expect(extractVerdict(text, schema)).toEqual({ ok: true, value: { passed: false, comments: ["a } brace in a string"] } });
  });

  it("lets the last valid object win over earlier drafts", () => {
    const text = 'Draft: {"passed": true, "comments": []} … final: {"passed": false, "comments": ["x"]}';
    expect(extractVerdict(text, schema)).toEqual({ ok: true, value: { passed: false, comments: ["x"] } });
  });

  it("skips a later object that fails the schema when an earlier one fits", () => {
    const text = '{"passed": true, "comments": []} and an example {"foo": 1}';
    expect(extractVerdict(text, schema)).toEqual({ ok: true, value: { passed: true, comments: [] } });
  });

  it("names the schema problem of the last object", () => {
    const r = extractVerdict('{"passed": "yes"}', schema);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toMatch(/schema mismatch: passed: .*boolean.*comments/);
  });

  it("says when there is no JSON at all, or it is malformed", () => {
    expect(extractVerdict("I think it passes.", schema)).toEqual({ ok: false, problem: "no JSON object found in the answer" });
    const r = extractVerdict("```json\n{passed: true}\n```", schema);
    expect(!r.ok && r.problem).toMatch(/^malformed JSON/);
  });

  it("finds nested objects as one candidate", () => {
    expect(jsonCandidates('a {"x": {"y": 1}} b').map((c) => c.source)).toEqual(['{"x": {"y": 1}}']);
  });
});
