import { splitUntrusted } from "@ratatoskr/contracts";
import { HOSTILE_TEXTS } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import { buildDevPrompt } from "../src/prompt/dev-prompt.ts";

describe("the dev prompt of a Telegram task with hostile text in every field", () => {
  for (const hostile of HOSTILE_TEXTS) {
    it(`keeps ${hostile.name} in untrusted blocks`, () => {
      const prompt = buildDevPrompt({
        taskId: 3,
        round: 2,
        maxRounds: 3,
        title: hostile.text,
        goal: hostile.text,
        why: hostile.text,
        acceptanceCriteria: [hostile.text, "200 OK"],
        workspaces: [`- acme/web: ./acme/web (branch ratatoskr/3-x)`],
        findings: [{ severity: "blocking", file: "a.ts", line: 2, text: hostile.text }],
      });
      const { outside, blocks } = splitUntrusted(prompt);
      expect(blocks.map((b) => b.label)).toEqual([
        "Title",
        "Goal",
        "Why",
        "Acceptance criteria",
        "Repositories (git working trees, already on the task branch)",
        "The reviewer rejected round 1; address each finding",
      ]);
      for (const payload of hostile.mustStayFenced) expect(outside).not.toContain(payload);
      expect(outside).toContain("Task #3, round 2 of at most 3.");
      expect(outside.trimEnd().endsWith("Ratatoskr commits and pushes your changes.")).toBe(true);
    });
  }
});
