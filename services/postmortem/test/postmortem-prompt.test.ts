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
        source: "telegram",
      });
      const { outside, blocks } = splitUntrusted(prompt);
      expect(blocks.map((b) => b.label)).toEqual(["Why the task ended", "The task, as the person asked for it", "Agent runs"]);
      for (const payload of hostile.mustStayFenced) expect(outside).not.toContain(payload);
      expect(outside.trimEnd().endsWith('{"cause":"why it happened, with the evidence","progress":"how far the work got","nextSteps":["what the person should do"]}')).toBe(true);
    });
  }
});

describe("the postmortem prompt tells the agent how the person's door goes on", () => {
  const input = (source: "telegram" | "gitea", cause: "failed" | "timeout") =>
    buildPostmortemPrompt({
      taskId: 7,
      cause,
      reason: null,
      task: { title: "t", goal: "g", repos: ["acme/web"], acceptanceCriteria: [], round: 1, maxRounds: 3, branch: null },
      traces: [],
      traceBudgetChars: 1_000,
      language: "en",
      source,
    });

  it("a Telegram task: /continue N after a timeout, /retry N after a failure", () => {
    expect(input("telegram", "timeout")).toContain("/continue 7 resumes the same session");
    expect(input("telegram", "failed")).toContain("/retry 7 starts the task again");
  });

  it("a Gitea command: /agent continue after a timeout, the command commented again after a failure", () => {
    expect(input("gitea", "timeout")).toContain("`/agent continue` on its issue or pull request resumes the same session");
    expect(input("gitea", "failed")).toContain("comment the command again on its issue or pull request to retry");
    expect(input("gitea", "failed")).not.toContain("/retry");
  });
});
