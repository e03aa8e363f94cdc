import { parseCallbackData } from "@ratatoskr/contracts";
import { parseTelegramHtml } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import { prepareMessage, type PreparedMessage } from "../src/rendering/prepare-message.ts";
import type { TaskFacts } from "../src/rendering/params-enricher.ts";

const TASK: TaskFacts = {
  id: 7,
  locale: null,
  title: "Fix <login> & logout",
  goal: "Users stay signed in",
  repos: ["acme/web", "acme/api"],
  why: "Tickets pile up",
  acceptanceCriteria: ["Session survives a reload", "Logout clears <cookies>"],
  branch: "ratatoskr/task-7",
  prUrl: "https://git.example.com/acme/web/pulls/3",
};

function ok(prepared: PreparedMessage): Extract<PreparedMessage, { ok: true }> {
  if (!prepared.ok) throw new Error(`expected a message, got problem: ${prepared.problem}`);
  return prepared;
}

/** What the person reads: Telegram's parse of the HTML; markup Telegram would reject fails the test. */
function plain(html: string): string {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(`Telegram would reject this HTML: ${parsed.error}`);
  return parsed.text;
}

describe("prepareMessage", () => {
  it("completes a draft notice from the task and puts Approve / Edit / Cancel under it", () => {
    const message = ok(
      prepareMessage({ template: "task.draft-ready", params: { taskId: 7 }, replyMarkup: null }, TASK, "en"),
    );

    expect(plain(message.html)).toContain("Title: Fix <login> & logout");
    expect(plain(message.html)).toContain("• Logout clears <cookies>");
    expect(plain(message.html)).toContain("Repositories: acme/web, acme/api");
    const buttons = message.replyMarkup?.inline_keyboard.flat() ?? [];
    expect(buttons.map((b) => b.text)).toEqual(["✅ Approve", "✏️ Edit", "✖️ Cancel"]);
    const data = buttons.map((b) => ("callback_data" in b ? parseCallbackData(b.callback_data) : null));
    expect(data).toEqual([
      { action: "approve", taskId: 7 },
      { action: "edit", taskId: 7 },
      { action: "cancel", taskId: 7 },
    ]);
  });

  it("writes in the task's language over the configured one, buttons included", () => {
    const message = ok(
      prepareMessage(
        { template: "task.draft-ready", params: { taskId: 7 }, replyMarkup: null },
        { ...TASK, locale: "ru" },
        "en",
      ),
    );
    expect(message.locale).toBe("ru");
    expect(plain(message.html)).toContain("Название: Fix <login> & logout");
    expect(message.replyMarkup?.inline_keyboard.flat().map((b) => b.text)).toEqual([
      "✅ Утвердить",
      "✏️ Изменить",
      "✖️ Отменить",
    ]);
  });

  it("falls back to the configured language when the task has none or an unknown one", () => {
    const source = { template: "task.approved", params: { taskId: 7 }, replyMarkup: null };
    expect(ok(prepareMessage(source, null, "ru")).locale).toBe("ru");
    expect(ok(prepareMessage(source, { ...TASK, locale: "de" }, "en")).locale).toBe("en");
  });

  it("lists the analyst's questions the reducer joined with newlines, escaped", () => {
    const params = { taskId: 7, questions: "Which <repo>?\n\nWhat & why?" };
    const message = ok(prepareMessage({ template: "task.questions", params, replyMarkup: null }, TASK, "en"));
    expect(plain(message.html)).toContain("1. Which <repo>?\n2. What & why?\n");
  });

  it("names every missing repository the reducer joined with newlines", () => {
    const params = { taskId: 7, missing: "acme/nope\nacme/gone" };
    const message = ok(
      prepareMessage({ template: "task.repo-not-found", params, replyMarkup: null }, TASK, "en"),
    );
    expect(plain(message.html)).toContain("acme/nope");
    expect(plain(message.html)).toContain("acme/gone");
    expect(plain(message.html)).not.toContain("acme/nope\nacme/gone");
  });

  it("takes branch and pull request of a finished task from the task row", () => {
    const message = ok(
      prepareMessage(
        { template: "task.success", params: { taskId: 7, round: 2 }, replyMarkup: null },
        TASK,
        "en",
      ),
    );
    expect(plain(message.html)).toContain("Branch: ratatoskr/task-7");
    expect(message.html).toContain('<a href="https://git.example.com/acme/web/pulls/3">');
  });

  it("shows the pushed commit when the producer names it, and the reviewer's remaining findings on a failure", () => {
    const success = ok(
      prepareMessage(
        { template: "task.success", params: { taskId: 7, round: 2, commit: "3f2a9c1" }, replyMarkup: null },
        TASK,
        "en",
      ),
    );
    expect(plain(success.html)).toContain("Commit: 3f2a9c1");
    const failed = ok(
      prepareMessage(
        {
          template: "task.failed",
          params: { taskId: 7, reason: "review still failing", findings: "a.ts:3 <off> by one\nno test" },
          replyMarkup: null,
        },
        TASK,
        "ru",
      ),
    );
    expect(plain(failed.html)).toContain("Оставшиеся замечания:\n• a.ts:3 <off> by one\n• no test");
    // A bare count (what review.rejected carries) is not a list to show; the message still goes out.
    const counted = ok(
      prepareMessage(
        { template: "task.failed", params: { taskId: 7, reason: "r", findings: 3 }, replyMarkup: null },
        TASK,
        "en",
      ),
    );
    expect(plain(counted.html)).not.toMatch(/Remaining findings|3/);
  });

  it("puts Continue (+budget) / Stop under a budget stop, in the task's language", () => {
    const message = ok(
      prepareMessage(
        {
          template: "task.budget-exceeded",
          params: { taskId: 7, spentUsd: 2.5, budgetUsd: 2 },
          replyMarkup: null,
        },
        { ...TASK, locale: "ru" },
        "en",
      ),
    );
    expect(plain(message.html)).toMatch(/потрачено 2,50\s\$, больше бюджета 2,00\s\$/);
    const buttons = message.replyMarkup?.inline_keyboard.flat() ?? [];
    expect(buttons.map((b) => b.text)).toEqual(["➕ Продолжить (+бюджет)", "⏹ Остановить"]);
    const data = buttons.map((b) => ("callback_data" in b ? parseCallbackData(b.callback_data) : null));
    expect(data).toEqual([
      { action: "more-budget", taskId: 7 },
      { action: "stop", taskId: 7 },
    ]);
  });

  it("renders complete params exactly as stored, without needing a task", () => {
    const params = { command: "/frob<nicate>" };
    const message = ok(
      prepareMessage({ template: "bot.unknown-command", params, replyMarkup: null }, null, "en"),
    );
    expect(message.html).toContain("<code>/frob&lt;nicate&gt;</code>");
    expect(message.replyMarkup).toBeUndefined();
  });

  it("keeps params the producer stored over the task's current values", () => {
    const params = {
      taskId: 7,
      title: "As shown then",
      goal: "g",
      repos: ["a/b"],
      why: "w",
      acceptanceCriteria: [],
    };
    const message = ok(
      prepareMessage({ template: "task.draft-ready", params, replyMarkup: null }, TASK, "en"),
    );
    expect(plain(message.html)).toContain("Title: As shown then");
  });

  it("uses the reply markup stored with the notification", () => {
    const replyMarkup = { inline_keyboard: [[{ text: "Open", url: "https://example.com/x" }]] };
    const message = ok(prepareMessage({ template: "bot.help", params: {}, replyMarkup }, null, "en"));
    expect(message.replyMarkup).toEqual(replyMarkup);
  });

  it.each([
    [
      "an unknown template",
      { template: "task.teleported", params: { taskId: 1 } },
      /unknown message template/,
    ],
    ["a button label", { template: "button.approve", params: {} }, /unknown message template/],
    [
      "a missing param",
      { template: "task.failed", params: { taskId: 1 } },
      /params of task.failed are invalid: reason/,
    ],
    ["params that are not an object", { template: "bot.help", params: [1] }, /not an object/],
    [
      "a bad stored keyboard",
      { template: "bot.help", params: {}, replyMarkup: { inline_keyboard: "no" } },
      /invalid reply markup/,
    ],
  ])("refuses %s with a problem that says what is wrong", (_what, source, problem) => {
    const prepared = prepareMessage({ replyMarkup: null, ...source }, null, "en");
    expect(prepared.ok).toBe(false);
    expect(prepared.ok ? "" : prepared.problem).toMatch(problem);
  });
});
