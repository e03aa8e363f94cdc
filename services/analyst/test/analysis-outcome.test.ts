import { describe, expect, it } from "vitest";
import { mergeDraft, type TaskDraft } from "../src/draft/draft-merge.ts";
import { isFullRepoName, normalizeRepoName } from "../src/draft/repo-name.ts";
import { interpretVerdict, settleDraft } from "../src/outcome/analysis-outcome.ts";
import {
  dialogueLanguage,
  missingRepositoriesQuestion,
  whichRepositoryQuestion,
} from "../src/outcome/fallback-questions.ts";

const EMPTY: TaskDraft = { title: null, goal: null, repos: [], why: null, acceptanceCriteria: [] };
const COMPLETE: TaskDraft = {
  title: "T",
  goal: "G",
  repos: ["acme/web"],
  why: "W",
  acceptanceCriteria: ["A"],
};

describe("draft merge", () => {
  it("changes only the fields the proposal names, and reports which changed", () => {
    const merged = mergeDraft(COMPLETE, { title: "T", goal: "New goal", acceptanceCriteria: ["A", "B"] });
    expect(merged.patch).toEqual({ goal: "New goal", acceptanceCriteria: ["A", "B"] });
    expect(merged.changed).toEqual(["goal", "acceptanceCriteria"]);
    expect(merged.draft).toEqual({ ...COMPLETE, goal: "New goal", acceptanceCriteria: ["A", "B"] });
  });

  it("normalizes repository names and drops duplicates", () => {
    const merged = mergeDraft(EMPTY, {
      repos: ["acme/web.git", "https://git.example.com/acme/web", " acme/api/ "],
    });
    expect(merged.draft.repos).toEqual(["acme/web", "acme/api"]);
  });
});

describe("repository names", () => {
  it.each([
    ["acme/web", true],
    ["acme-1/web_2.js", true],
    ["web", false],
    ["acme/web/extra", false],
    ["acme/..", false],
    ["acme/we b", false],
  ] as const)("%s is owner/name: %s", (name, ok) => {
    expect(isFullRepoName(normalizeRepoName(name))).toBe(ok);
  });
});

describe("what a verdict means for the task", () => {
  it("keeps at most maxQuestions questions", () => {
    expect(interpretVerdict({ phase: "ask", questions: ["a", "b", "c"] }, EMPTY, 2)).toEqual({
      kind: "ask",
      questions: ["a", "b"],
      reply: undefined,
    });
  });

  it("keeps each question on one line (questions travel joined by newlines)", () => {
    expect(interpretVerdict({ phase: "ask", questions: ["Which\n  endpoint?"] }, EMPTY, 2)).toMatchObject({
      questions: ["Which endpoint?"],
    });
  });

  it("treats a propose that changes nothing like ready", () => {
    const unchanged = interpretVerdict({ phase: "propose", draft: { title: "T" } }, COMPLETE, 3);
    const ready = interpretVerdict({ phase: "ready" }, COMPLETE, 3);
    expect(unchanged).toEqual({
      kind: "draft",
      patch: {},
      repos: ["acme/web"],
      reply: undefined,
      changed: [],
    });
    expect(ready).toEqual(unchanged);
  });

  it("asks which repository when the draft would have none, keeping the other fields", () => {
    expect(interpretVerdict({ phase: "propose", draft: { title: "New", repos: [] } }, COMPLETE, 3)).toEqual({
      kind: "needs-repository",
      patch: { title: "New" },
      reply: undefined,
    });
    expect(interpretVerdict({ phase: "ready" }, EMPTY, 3)).toMatchObject({
      kind: "needs-repository",
      patch: {},
    });
  });

  it("does not store repositories that failed the check", () => {
    const meaning = interpretVerdict(
      { phase: "propose", draft: { title: "New", repos: ["acme/nope"] } },
      EMPTY,
      3,
    );
    if (meaning.kind !== "draft") throw new Error(`expected a draft, got ${meaning.kind}`);
    expect(settleDraft(meaning, ["acme/nope"])).toEqual({
      kind: "repos-missing",
      patch: { title: "New" },
      missing: ["acme/nope"],
    });
    expect(settleDraft(meaning, [])).toEqual({
      kind: "drafted",
      patch: { title: "New", repos: ["acme/nope"] },
      reply: undefined,
      changed: ["title", "repos"],
    });
  });

  it("passes abort through with its reason", () => {
    expect(interpretVerdict({ phase: "abort", reason: "small talk" }, EMPTY, 3)).toEqual({
      kind: "abort",
      reason: "small talk",
    });
  });
});

describe("the service's own questions", () => {
  it("follow the language the person writes in", () => {
    expect(dialogueLanguage(["Сделай эндпоинт /health в acme/web"])).toBe("ru");
    expect(dialogueLanguage(["Add /health", "ok"])).toBe("en");
    expect(dialogueLanguage([])).toBe("en");
    expect(whichRepositoryQuestion("ru")).toContain("owner/name");
    expect(missingRepositoriesQuestion("en", ["acme/a", "acme/b"])).toBe(
      "I can't find the repositories acme/a, acme/b. Which repository should I work in? Send it as owner/name.",
    );
  });
});
