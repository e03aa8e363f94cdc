import { formatCallbackData, type CallbackAction } from "@ratatoskr/contracts";
import type { Task } from "@ratatoskr/db";
import { render, type TemplateParams } from "@ratatoskr/notifier";
import { Telegram } from "telegraf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IngressHarness } from "./support/ingress-harness.ts";

const CHATS = [5101, 5102, 5103, 5104];
let h: IngressHarness;

beforeAll(async () => {
  h = await IngressHarness.start({ TELEGRAM_ALLOWED_CHAT_IDS: CHATS.join(","), TASK_BUDGET_USD: "1.00" });
});

afterAll(async () => {
  await h?.stop();
});

/** A task whose dev round 1 cost `costUsd`, stopped by the budget before its review, as the reviewer would stop it. */
async function pausedTask(chat: number, costUsd: number): Promise<Task> {
  const task = await h.readyTask(chat);
  await h.transition(task.id, { type: "user.approved" });
  await h.transition(task.id, { type: "dev.started" });
  const startedAt = new Date("2026-11-30T10:00:00Z");
  await h.host.context.repos.traces.record(task.id, {
    agent: "dev",
    prompt: "implement",
    outcome: "completed",
    tokens: { input: 5_000, output: 1_000 },
    cost: costUsd,
    startedAt,
    endedAt: new Date(startedAt.getTime() + 60_000),
  });
  await h.transition(task.id, { type: "budget.exceeded", spentUsd: costUsd, budgetUsd: 1, step: "review" });
  return task;
}

/** The budget message with its two buttons, as the notifier sends it; returns its message id. */
async function showBudgetButtons(chat: number, taskId: number): Promise<number> {
  const button = (action: CallbackAction) => ({
    text: action,
    callback_data: formatCallbackData({ action, taskId }),
  });
  const telegram = new Telegram(h.fake.token, { apiRoot: h.fake.url });
  const sent = await telegram.sendMessage(chat, `Budget of #${taskId}`, {
    reply_markup: { inline_keyboard: [[button("more-budget"), button("stop")]] },
  });
  return sent.message_id;
}

describe("task budget (P5)", () => {
  it("gives a new task the configured budget and tells the person the spend when it stops", async () => {
    const chat = CHATS[0] as number;
    const task = await pausedTask(chat, 1.37);
    expect(await h.onlyTask(chat)).toMatchObject({ status: "paused", budgetUsd: 1, pausedStep: "review" });
    const [stop] = await h.notifications(chat, "task.budget-exceeded");
    expect(stop?.params).toEqual({ taskId: task.id, spentUsd: 1.37, budgetUsd: 1 });
    expect(
      render("en", "task.budget-exceeded", stop?.params as unknown as TemplateParams["task.budget-exceeded"]),
    ).toContain("it has spent $1.37, more than its budget of $1.00");
    // Nothing runs while the task waits.
    expect(await h.jobs("review", task.id)).toHaveLength(0);
    expect(await h.jobs("dev", task.id)).toHaveLength(1);
  });

  it("Continue (+budget) pressed twice extends once: one new budget, one resumed run, a toast for the second", async () => {
    const chat = CHATS[1] as number;
    const task = await pausedTask(chat, 1.37);
    const message = await showBudgetButtons(chat, task.id);
    const first = h.press(chat, message, formatCallbackData({ action: "more-budget", taskId: task.id }));
    const second = h.press(chat, message, formatCallbackData({ action: "more-budget", taskId: task.id }));
    await h.settled();

    expect(await h.onlyTask(chat)).toMatchObject({ status: "running", budgetUsd: 2.37, pausedStep: null });
    const reviews = await h.jobs("review", task.id);
    expect(reviews.map((job) => job.data)).toEqual([{ v: 1, taskId: task.id, kind: "diff", round: 1 }]);
    expect(await h.jobs("dev", task.id)).toHaveLength(1);
    expect((await h.notifications(chat, "task.budget-extended")).map((n) => n.params)).toEqual([
      { taskId: task.id, budgetUsd: 2.37 },
    ]);
    expect(h.fake.callbackAnswer(first)).toEqual({ showAlert: false });
    expect(h.fake.callbackAnswer(second)?.text).toBe(
      `Task #${task.id} is not waiting on its budget any more: it is in progress.`,
    );
  });

  it("Stop cancels the paused task once; Continue pressed after it changes nothing", async () => {
    const chat = CHATS[2] as number;
    const task = await pausedTask(chat, 1.5);
    const message = await showBudgetButtons(chat, task.id);
    h.press(chat, message, formatCallbackData({ action: "stop", taskId: task.id }));
    const late = h.press(chat, message, formatCallbackData({ action: "more-budget", taskId: task.id }));
    await h.settled();

    expect(await h.onlyTask(chat)).toMatchObject({ status: "cancelled", budgetUsd: 1 });
    expect(await h.notifications(chat, "task.cancelled")).toHaveLength(1);
    expect(await h.notifications(chat, "task.budget-extended")).toEqual([]);
    expect(await h.jobs("review", task.id)).toHaveLength(0);
    expect(h.fake.callbackAnswer(late)?.text).toMatch(/not waiting on its budget any more: it is cancelled/);
  });

  it("/status N shows the spend against the budget", async () => {
    const chat = CHATS[3] as number;
    const task = await pausedTask(chat, 1.25);
    h.say(chat, `/status ${task.id}`);
    await h.settled();
    const [status] = await h.notifications(chat, "task.status");
    const text = render("en", "task.status", status?.params as unknown as TemplateParams["task.status"]);
    expect(text).toContain("Status: paused: over its budget");
    expect(text).toContain("Total: 6,000 tokens, $1.25 of a $1.00 budget");
  });
});
