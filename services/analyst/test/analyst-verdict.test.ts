import { describe, expect, it } from "vitest";
import { analystVerdictSchema } from "../src/verdict/analyst-verdict.schema.ts";
import { verdictProblem } from "../src/verdict/verdict-problem.ts";

const parse = (value: unknown) => analystVerdictSchema.safeParse(value);

describe("analyst verdict schema", () => {
  it("accepts each phase in its documented shape", () => {
    expect(parse({ phase: "ask", questions: [" Which repo? "], reply: "ok" }).data).toEqual({
      phase: "ask",
      questions: ["Which repo?"],
      reply: "ok",
    });
    expect(
      parse({ phase: "propose", draft: { title: "T", repos: ["a/b"], acceptanceCriteria: ["x"] } }).success,
    ).toBe(true);
    expect(parse({ phase: "propose", draft: {} }).success).toBe(true);
    expect(parse({ phase: "ready" }).success).toBe(true);
    expect(parse({ phase: "abort", reason: "small talk" }).success).toBe(true);
  });

  it("rejects what the repair prompt must fix", () => {
    expect(parse({ phase: "ask", questions: [] }).success).toBe(false);
    expect(parse({ phase: "ask", questions: ["  "] }).success).toBe(false);
    expect(parse({ phase: "abort" }).success).toBe(false);
    expect(parse({ phase: "propose" }).success).toBe(false);
    expect(parse({ phase: "maybe" }).success).toBe(false);
    expect(parse({ questions: ["a?"] }).success).toBe(false);
  });

  it("names a misspelt draft field instead of dropping it", () => {
    const result = parse({ phase: "propose", draft: { ac: ["x"] } });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain("ac");
  });
});

describe("what was wrong with an unusable answer", () => {
  it.each([
    ["", "no-verdict"],
    ["   \n", "no-verdict"],
    ["I would add the endpoint.", "invalid-json"],
    ['{"phase":"ask","questions":["a"', "invalid-json"],
    ['{"questions":["a?"]}', "no-phase"],
    ['{"phase":""}', "no-phase"],
    ['{"phase":"maybe"}', "unknown-phase"],
    ['{"phase":"propose","draft":{"ac":"x"}}', "invalid-fields"],
    ['{"phase":"ask","questions":[]}', "invalid-fields"],
  ] as const)("%j → %s", (output, problem) => {
    expect(verdictProblem(output)).toBe(problem);
  });

  it("judges the last answer (the repair) rather than the first", () => {
    expect(verdictProblem('not json at all\n{"phase":"maybe"}')).toBe("unknown-phase");
    expect(verdictProblem('{"phase":"maybe"}\nsorry, no json this time')).toBe("unknown-phase");
  });
});
