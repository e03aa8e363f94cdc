import { splitUntrusted } from "@ratatoskr/contracts";
import { HOSTILE_TEXTS } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import {
  buildAnalystPrompt,
  MAX_HISTORY_LINES,
  PROMPT_SECTIONS,
  SKIP_NOTE,
  type AnalystPromptInput,
} from "../src/prompt/analyst-prompt.ts";

const EMPTY_DRAFT = { title: null, goal: null, repos: [], why: null, acceptanceCriteria: [] };

function prompt(overrides: Partial<AnalystPromptInput> = {}): string {
  return buildAnalystPrompt({
    taskId: 7,
    draft: EMPTY_DRAFT,
    history: [],
    newMessages: ["Add /health"],
    maxQuestions: 3,
    forced: false,
    ...overrides,
  });
}

function under(text: string, heading: string): string {
  const rest = text.slice(text.indexOf(heading) + heading.length);
  return rest.slice(0, rest.search(/\n## |$/));
}

describe("analyst prompt", () => {
  it("shows the current draft, marking fields not set yet", () => {
    const text = prompt({
      draft: {
        ...EMPTY_DRAFT,
        title: "Health check",
        repos: ["acme/web", "acme/api"],
        acceptanceCriteria: ["200 OK"],
      },
    });
    const draft = splitUntrusted(under(text, PROMPT_SECTIONS.draft)).blocks[0]?.body ?? "";
    expect(draft).toContain("- title: Health check");
    expect(draft).toContain("- goal: (not set)");
    expect(draft).toContain("- repos:\n  - acme/web\n  - acme/api");
    expect(draft).toContain("- acceptanceCriteria:\n  - 200 OK");
  });

  it("separates the dialogue so far from the new messages", () => {
    const text = prompt({
      history: [
        { role: "user", text: "I need a health check" },
        { role: "assistant", text: "Which repository?" },
      ],
      newMessages: ["acme/web", "and JSON please\nwith a status field"],
    });
    const blocks = (heading: string) => splitUntrusted(under(text, heading)).blocks.map((b) => [b.label, b.body]);
    expect(blocks(PROMPT_SECTIONS.history)).toEqual([
      ["Person", "I need a health check"],
      ["Analyst (your earlier answer)", "Which repository?"],
    ]);
    expect(blocks(PROMPT_SECTIONS.newMessages)).toEqual([
      ["New message from the person", "acme/web"],
      ["New message from the person", "and JSON please\nwith a status field"],
    ]);
  });

  it("says when there is no new message (a retry or /skip)", () => {
    expect(under(prompt({ newMessages: [] }), PROMPT_SECTIONS.newMessages)).toContain("no new messages");
  });

  it("states the question limit, and the skip note only for a forced draft", () => {
    expect(prompt({ maxQuestions: 1 })).toContain("Ask at most 1 question.");
    expect(prompt({ maxQuestions: 3 })).toContain("Ask at most 3 questions.");
    expect(prompt()).not.toContain(SKIP_NOTE);
    expect(under(prompt({ forced: true }), PROMPT_SECTIONS.instructions)).toContain(SKIP_NOTE);
  });

  it("keeps only the newest history lines of a long dialogue", () => {
    const history = Array.from({ length: MAX_HISTORY_LINES + 5 }, (_, i) => ({
      role: "user" as const,
      text: `line ${i}`,
    }));
    const text = under(prompt({ history }), PROMPT_SECTIONS.history);
    expect(text).toContain("(5 earlier messages omitted)");
    expect(text).not.toContain("line 4\n");
    expect(text).toContain(`line ${MAX_HISTORY_LINES + 4}`);
  });
});

describe("analyst prompt with hostile text in every field a person fills", () => {
  for (const hostile of HOSTILE_TEXTS) {
    it(`keeps ${hostile.name} in untrusted blocks`, () => {
      const text = prompt({
        draft: { title: hostile.text, goal: hostile.text, repos: ["acme/web"], why: hostile.text, acceptanceCriteria: [hostile.text] },
        history: [
          { role: "user", text: hostile.text },
          { role: "assistant", text: hostile.text },
        ],
        newMessages: [hostile.text],
      });
      const { outside, blocks } = splitUntrusted(text);
      expect(blocks.length).toBe(4);
      for (const payload of hostile.mustStayFenced) expect(outside).not.toContain(payload);
      // The prompt's own closing instructions come after every block, untouched.
      expect(outside.trimEnd().endsWith("Answer with exactly one JSON object as described in your instructions.")).toBe(true);
    });
  }
});
