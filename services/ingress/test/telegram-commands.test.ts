import type { Task } from "@ratatoskr/db";
import { render, type TemplateParams } from "@ratatoskr/notifier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IngressHarness } from "./support/ingress-harness.ts";

const CHATS = Array.from({ length: 20 }, (_, i) => 3001 + i);
let nextChat = 0;
/** A chat of its own for each test. */
const freshChat = (): number => CHATS[nextChat++] as number;

let h: IngressHarness;

beforeAll(async () => {
  h = await IngressHarness.start({
    TELEGRAM_ALLOWED_CHAT_IDS: CHATS.join(","),
    SERVICE_VERSION: "1.4.2-test",
  });
});

afterAll(async () => {
  await h?.stop();
});

/** Sends one command and returns the templates of the chat's notifications once it is handled. */
async function command(chat: number, text: string): Promise<string[]> {
  h.say(chat, text);
  await h.settled();
  return (await h.notifications(chat)).map((n) => n.template);
}

async function lastParams(chat: number, template: string): Promise<unknown> {
  return (await h.notifications(chat, template)).at(-1)?.params;
}

/** Drives a task through the pipeline the way dev and reviewer would report it. */
async function approvedTask(chat: number): Promise<Task> {
  const task = await h.readyTask(chat);
  await h.transition(task.id, { type: "user.approved" });
  return task;
}

describe("task commands", () => {
  it("registers the command menu at start", () => {
    expect(h.fake.commands().map((c) => c.command)).toEqual([
      "start",
      "cancel",
      "skip",
      "retry",
      "status",
      "continue",
      "attach",
      "help",
    ]);
  });

  it("/start opens a draft with a greeting; a second /start keeps the first and makes the new one active", async () => {
    const chat = freshChat();
    await command(chat, "/start");
    await command(chat, "/start@ratatoskr_test_bot");
    const [first, second] = await h.tasks(chat);
    expect([first?.status, second?.status]).toEqual(["draft", "draft"]);
    expect((await h.notifications(chat, "bot.greeting")).map((n) => n.params)).toEqual([
      { taskId: first?.id },
      { taskId: second?.id },
    ]);
    h.say(chat, "the text goes to the newest task");
    await h.settled();
    expect(await h.turnTexts(second?.id as number)).toEqual(["the text goes to the newest task"]);
    expect(await h.turnTexts(first?.id as number)).toEqual([]);
  });

  it("ignores a command addressed to another bot", async () => {
    const chat = freshChat();
    expect(await command(chat, "/start@some_other_bot")).toEqual([]);
    expect(await h.tasks(chat)).toEqual([]);
  });

  it("/cancel cancels the active task, and says so when there is none", async () => {
    const chat = freshChat();
    expect(await command(chat, "/cancel")).toEqual(["bot.nothing-to-cancel"]);
    await command(chat, "/start");
    expect(await command(chat, "/cancel")).toEqual([
      "bot.nothing-to-cancel",
      "bot.greeting",
      "task.cancelled",
    ]);
    expect((await h.onlyTask(chat)).status).toBe("cancelled");
  });

  it("/skip asks the analyst for a draft now", async () => {
    const chat = freshChat();
    await command(chat, "/start");
    await command(chat, "/skip");
    const task = await h.onlyTask(chat);
    expect(task).toMatchObject({ status: "collecting", skipRequested: true, analysing: true });
    expect((await h.jobs("analyst", task.id)).map((j) => j.data.kind)).toEqual(["force-draft"]);
  });

  it("/retry N refuses a successful task, naming its status", async () => {
    const chat = freshChat();
    const task = await approvedTask(chat);
    for (const event of [
      { type: "dev.started" },
      { type: "dev.finished", commit: "1a2b3c4" },
      { type: "review.passed", branch: "ratatoskr/1-x", commit: "1a2b3c4" },
    ] as const) {
      await h.transition(task.id, event);
    }
    await command(chat, `/retry ${task.id}`);
    expect(await lastParams(chat, "task.retry-refused")).toEqual({ taskId: task.id, status: "success" });
    expect(await h.jobs("dev", task.id)).toHaveLength(1);
  });

  it("/retry N re-runs a failed task", async () => {
    const chat = freshChat();
    const task = await approvedTask(chat);
    await h.transition(task.id, { type: "run.failed", reason: "tests did not pass" });
    await command(chat, `/retry #${task.id}`);
    expect((await h.onlyTask(chat)).status).toBe("approved");
    expect(await h.notifications(chat, "task.retried")).toHaveLength(1);
    expect(await h.jobs("dev", task.id)).toHaveLength(2);
  });

  it("/continue N resumes a timed-out task and refuses a running one", async () => {
    const chat = freshChat();
    const task = await approvedTask(chat);
    await h.transition(task.id, { type: "dev.started" });
    await command(chat, `/continue ${task.id}`);
    expect(await lastParams(chat, "task.already-approved")).toEqual({ taskId: task.id });

    await h.transition(task.id, { type: "run.timed_out" });
    await command(chat, `/continue ${task.id}`);
    expect((await h.onlyTask(chat)).status).toBe("approved");
    expect((await h.jobs("dev", task.id)).map((j) => j.data.kind).sort()).toEqual(["continue", "implement"]);
  });

  it("/status N shows status, title, repositories, branch, round, the latest runs and the total spend", async () => {
    const chat = freshChat();
    const task = await approvedTask(chat);
    await h.prisma.task.update({
      where: { id: task.id },
      data: { title: "Health endpoint", repos: ["acme/api"], branch: "ratatoskr/1-health-endpoint" },
    });
    const startedAt = new Date("2026-01-01T10:00:00Z");
    await h.host.context.repos.traces.record(task.id, {
      agent: "dev",
      prompt: "implement",
      outcome: "completed",
      tokens: { input: 1_000, output: 200, reasoning: 50 },
      cost: 0.25,
      startedAt,
      endedAt: new Date(startedAt.getTime() + 90_000),
    });
    await h.host.context.repos.traces.record(task.id, {
      agent: "reviewer",
      prompt: "review",
      outcome: "completed",
      tokens: { input: 400, output: 100 },
      cost: 0.5,
      startedAt: new Date(startedAt.getTime() + 100_000),
      endedAt: new Date(startedAt.getTime() + 130_000),
    });
    await command(chat, `/status ${task.id}`);
    const params = await lastParams(chat, "task.status");
    expect(params).toEqual({
      taskId: task.id,
      status: "approved",
      title: "Health endpoint",
      repos: ["acme/api"],
      round: 1,
      maxRounds: 3,
      branch: "ratatoskr/1-health-endpoint",
      traces: [
        { agent: "dev", outcome: "completed", durationMs: 90_000, tokens: 1_250, costUsd: 0.25 },
        { agent: "reviewer", outcome: "completed", durationMs: 30_000, tokens: 500, costUsd: 0.5 },
      ],
      // Both runs ended: no agent works now.
      live: null,
      totalTokens: 1_750,
      totalCostUsd: 0.75,
      budgetUsd: null,
    });
    // What the person reads.
    const text = render("en", "task.status", params as TemplateParams["task.status"]);
    expect(text).toContain("Branch: <code>ratatoskr/1-health-endpoint</code>");
    expect(text).toContain("dev — completed, 1 min 30 s, 1,250 tokens, $0.25");
    expect(text).toContain("Total: 1,750 tokens, $0.75");
  });

  it("/status without N lists the versions of the running services", async () => {
    const chat = freshChat();
    await command(chat, "/status");
    expect(await lastParams(chat, "bot.versions")).toEqual({
      services: [{ name: "ingress", version: "1.4.2-test" }],
    });
  });

  it("/attach N gives the opencode command for a live session, a line saying none is live otherwise", async () => {
    const chat = freshChat();
    await command(chat, "/start");
    const draft = await h.onlyTask(chat);
    await command(chat, `/attach ${draft.id}`);
    expect(await h.notifications(chat, "bot.attach")).toEqual([]);
    expect(await lastParams(chat, "bot.attach-none")).toEqual({ taskId: draft.id, status: "draft" });

    const live = await approvedTask(freshChat());
    const liveChat = Number(live.chatId);
    await h.host.context.repos.traces.record(live.id, {
      agent: "dev",
      prompt: "implement",
      outcome: "running",
      sessionId: "ses_abc123",
      serverUrl: "http://127.0.0.1:4096",
      startedAt: new Date(),
    });
    await command(liveChat, `/attach ${live.id}`);
    const attach = await lastParams(liveChat, "bot.attach");
    expect(attach).toEqual({
      taskId: live.id,
      serverUrl: "http://127.0.0.1:4096",
      sessionId: "ses_abc123",
    });
    expect(render("en", "bot.attach", attach as TemplateParams["bot.attach"])).toContain(
      "<code>opencode attach http://127.0.0.1:4096 --session ses_abc123</code>",
    );

    // The session stored on the task when the run started wins over older traces.
    await h.prisma.task.update({
      where: { id: live.id },
      data: { agentSessionId: "ses_now", agentServerUrl: "http://127.0.0.1:4097" },
    });
    await command(liveChat, `/attach ${live.id}`);
    expect(await lastParams(liveChat, "bot.attach")).toMatchObject({
      sessionId: "ses_now",
      serverUrl: "http://127.0.0.1:4097",
    });

    // Once the run is over nothing is live, even with a session stored.
    await h.transition(live.id, { type: "run.failed", reason: "tests did not pass" });
    await command(liveChat, `/attach ${live.id}`);
    expect(await lastParams(liveChat, "bot.attach-none")).toEqual({ taskId: live.id, status: "failed" });
  });

  it("answers a missing or invalid N, and N of another chat's task, clearly", async () => {
    const chat = freshChat();
    const foreign = await approvedTask(freshChat());
    await command(chat, "/retry");
    await command(chat, "/status abc");
    await command(chat, "/continue 0");
    await command(chat, `/attach ${foreign.id}`);
    await command(chat, "/status 99999999999");
    const replies = (await h.notifications(chat)).map((n) => [n.template, n.params]);
    expect(replies).toEqual([
      ["bot.task-number-needed", { command: "retry", given: null }],
      ["bot.task-number-needed", { command: "status", given: "abc" }],
      ["bot.task-number-needed", { command: "continue", given: "0" }],
      ["task.not-found", { taskId: foreign.id }],
      ["bot.task-number-needed", { command: "status", given: "99999999999" }],
    ]);
  });

  it("/help lists the commands and an unknown command gets the list too", async () => {
    const chat = freshChat();
    await command(chat, "/help");
    await command(chat, "/frobnicate now");
    expect((await h.notifications(chat)).map((n) => [n.template, n.params])).toEqual([
      ["bot.help", {}],
      ["bot.unknown-command", { command: "/frobnicate" }],
    ]);
  });
});
