import { describe, expect, it } from "vitest";
import { isApprovalWord, normalizePhrase } from "../src/telegram/parsing/approval-words.ts";

describe("isApprovalWord", () => {
  it.each([
    "создавай",
    "Создавай!",
    "  го  ",
    "ДАВАЙ.",
    "go",
    "Go!!!",
    "approve",
    "OK, go",
    "ok go",
    "Окей",
    "LGTM",
    "ship it",
    "👍",
    "👍🏽",
    "✅",
  ])("approves %j", (text) => expect(isApprovalWord(text)).toBe(true));

  it.each([
    "go, but rename it",
    "don't go",
    "создавай задачу про другое",
    "gogo",
    "approve?? no wait, change the title",
    "",
    "👍 but",
    "нет",
  ])("treats %j as an edit", (text) => expect(isApprovalWord(text)).toBe(false));
});

describe("normalizePhrase", () => {
  it("lowercases, folds ё and drops punctuation", () => {
    expect(normalizePhrase("  Ещё, ОК — ГО!  ")).toBe("еще ок го");
  });
});
