import { splitUntrusted } from "@ratatoskr/contracts";
import { HOSTILE_TEXTS } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import { buildPostmortemPrompt } from "../src/prompt/postmortem-prompt.ts";

describe("the postmortem prompt with hostile text in the task, the reason and the traces", () => {
  for (const hostile of HOSTILE_TEXTS) {
    it(`keeps ${hostile.name} in untrusted blocks`, () => {
      const at = new Date("2026-12-01T10:00:00Z");
      const prompt = buildPostmortemPrompt({
        taskId: 4,
        cause: "failed",
        reason: hostile.text,
        task: { title: hostile.text, goal: hostile.text, repos: ["acme/web"], acceptanceCriteria: [hostile.text], round: 2, maxRounds: 3, branch: "ratatoskr/4-x" },
        traces: [
          { id: 1, agent: "dev", round: 1, outcome: "ok", prompt: hostile.text, output: hostile.text, error: null, model: "m", tokensInput: 1, tokensOutput: 1, tokensReasoning: 0, cost: 0, startedAt: at, endedAt: at },
        ],
        traceBudgetChars: 24_000,
        language: "en",
      });
      const { outside, blocks } = splitUntrusted(prompt);
      expect(blocks.map((b) => b.label)).toEqual(["Why the task ended", "The task, as the person asked for it", "Agent runs"]);
      for (const payload of hostile.mustStayFenced) expect(outside).not.toContain(payload);
      expect(outside.trimEnd().endsWith('{"cause":"why it happened, with the evidence","progress":"how far the work got","nextSteps":["what the person should do"]}')).toBe(true);
    });
  }
});
