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

  it("never falls back to an earlier draft when the last object fails the schema (→ repair)", () => {
    const text = 'Draft: {"passed": true, "comments": []}\nFinal: {"passed": "no", "comments": ["x"]}';
    const r = extractVerdict(text, schema);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toMatch(/^schema mismatch: passed: .*boolean/);
  });

  it("never falls back to an earlier draft when the last object is malformed", () => {
    const text = '```json\n{"passed": true, "comments": []}\n```\nFinal:\n```json\n{"passed": false, "comments": ["x"],}\n```';
    const r = extractVerdict(text, schema);
    expect(!r.ok && r.problem).toMatch(/^malformed JSON in the last object/);
  });

  it("finds the verdict after an unbalanced { in the prose", () => {
    for (const prose of ['I started {"passed": true, then changed my mind.', "Set {x to y first { and", 'Note: {"a": "unterminated\nline']) {
      const text = `${prose}\nVerdict: {"passed": false, "comments": ["x"]}`;
      expect(extractVerdict(text, schema)).toEqual({ ok: true, value: { passed: false, comments: ["x"] } });
    }
  });

  it("ignores prose braces and non-JSON code fences after the verdict", () => {
    const text = '{"passed": true, "comments": []}\nUse {name} as a placeholder.\n```ts\nconst x = { a: 1 };\n```';
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

  it("stays fast on a 200 KB answer with a thousand unbalanced braces", () => {
    const text = `{"a": 1, ${"x".repeat(200)}`.repeat(1_000) + '\n{"passed": true, "comments": []}';
    const started = performance.now();
    expect(extractVerdict(text, schema).ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("finds nested objects as one candidate", () => {
    expect(jsonCandidates('a {"x": {"y": 1}} b').map((c) => c.source)).toEqual(['{"x": {"y": 1}}']);
  });
});
