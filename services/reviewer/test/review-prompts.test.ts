import { splitUntrusted } from "@ratatoskr/contracts";
import { HOSTILE_TEXTS } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import { buildPlanReviewPrompt } from "../src/prompt/plan-review-prompt.ts";
import { buildReviewPrompt } from "../src/prompt/review-prompt.ts";

const ANSWER = 'Answer with the JSON verdict only: {"passed": …, "summary": …, "findings": [{"severity", "file", "line", "text"}]}.';

describe("the reviewer's prompts with hostile text in every field, the code under review included", () => {
  for (const hostile of HOSTILE_TEXTS) {
    it(`keeps ${hostile.name} in untrusted blocks (diff review)`, () => {
      const diff = `### acme/web (ratatoskr/1-x)\ndiff --git a/a.ts b/a.ts\n+// ${hostile.text.replace(/\n/g, "\n+// ")}\n`;
      const prompt = buildReviewPrompt({ taskId: 1, round: 1, title: hostile.text, goal: hostile.text, acceptanceCriteria: [hostile.text], diff, maxDiffChars: 200_000 });
      const { outside, blocks } = splitUntrusted(prompt);
      expect(blocks.map((b) => b.label)).toEqual(["Title", "Goal", "Acceptance criteria", "Diff"]);
      for (const payload of hostile.mustStayFenced) expect(outside).not.toContain(payload);
      expect(outside.trimEnd().endsWith(ANSWER)).toBe(true);
    });

    it(`keeps ${hostile.name} in untrusted blocks (plan review)`, () => {
      const prompt = buildPlanReviewPrompt({ taskId: 2, round: 1, title: hostile.text, body: hostile.text, plan: hostile.text });
      const { outside, blocks } = splitUntrusted(prompt);
      expect(blocks).toHaveLength(3);
      for (const payload of [...hostile.mustStayFenced, ...hostile.mustVanish]) expect(outside).not.toContain(payload);
      for (const gone of hostile.mustVanish) expect(prompt).not.toContain(gone);
      expect(outside.trimEnd().endsWith(ANSWER)).toBe(true);
    });
  }

  it("says when the diff was cut, outside the block, and shows the code's bidi controls as a reader sees them", () => {
    const prompt = buildReviewPrompt({ taskId: 1, round: 1, title: "t", goal: "g", acceptanceCriteria: [], diff: `+x = "a\u202ecba"\n${"y".repeat(3_000)}`, maxDiffChars: 1_000 });
    const { outside, blocks } = splitUntrusted(prompt);
    expect(outside).toContain("(cut at 1000 characters of");
    expect(blocks[2]?.body).toContain("it held 1 bidirectional control character(s)");
    expect(blocks[2]?.body).toContain('+x = "a"abc'); // the override runs to the end of its line
  });
});
