import { formatCallbackData } from "@ratatoskr/contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { IngressHarness, WAIT } from "./support/ingress-harness.ts";

// Each test uses chats of its own, so one ingress serves the whole file.
const ALLOWED = Array.from({ length: 12 }, (_, i) => 2001 + i);
const STRANGER = 6660;
const GROUP = -100_777;
const MEMBER = 4242;

let h: IngressHarness;

beforeAll(async () => {
  h = await IngressHarness.start({
    TELEGRAM_ALLOWED_CHAT_IDS: ALLOWED.join(","),
    TELEGRAM_ALLOWED_USER_IDS: String(MEMBER),
    TASK_MAX_TURNS: "2",
  });
});

afterAll(async () => {
  await h?.stop();
});

describe("free text", () => {
  it("stores three messages sent within a second as three turns in order, with one analyst job", async () => {
    const chat = 2001;
    h.say(chat, "first: the login page");
    h.say(chat, "second: it times out");
    h.say(chat, "third: only on Safari");
    await h.settled();

    const task = await h.onlyTask(chat);
    expect(await h.turnTexts(task.id)).toEqual([
      "first: the login page",
      "second: it times out",
      "third: only on Safari",
    ]);
    expect(task).toMatchObject({ status: "collecting", pendingTurns: 3, analysing: true });
    const analyst = await h.jobs("analyst", task.id);
    expect(analyst.map((j) => j.data)).toEqual([{ v: 1, taskId: task.id, kind: "turn" }]);
    // No greeting: a task opened by free text is introduced by the analyst's first answer.
    expect(await h.notifications(chat)).toEqual([]);
  });

  it("approves a ready draft by an approval word exactly once", async () => {
    const chat = 2002;
    const task = await h.readyTask(chat);
    h.say(chat, "  Go! ");
    await vi.waitFor(async () => expect((await h.onlyTask(chat)).status).toBe("approved"), WAIT);

    expect(await h.jobs("dev", task.id)).toHaveLength(1);
    expect(await h.notifications(chat, "task.approved")).toHaveLength(1);
    expect(await h.turnTexts(task.id)).toEqual(["Add a health endpoint to acme/api"]);
  });

  it("treats other text on a ready draft as an edit for the analyst", async () => {
    const chat = 2003;
    const task = await h.readyTask(chat);
    h.say(chat, "go, but also add a readiness probe");
    await h.settled();

    expect(await h.onlyTask(chat)).toMatchObject({ status: "collecting", analysing: true, pendingTurns: 1 });
    expect(await h.turnTexts(task.id)).toHaveLength(2);
    expect(await h.jobs("analyst", task.id)).toHaveLength(2);
    expect(await h.jobs("dev", task.id)).toHaveLength(0);
  });

  it("answers text on an approved task with already-approved and stores no turn", async () => {
    const chat = 2004;
    const task = await h.readyTask(chat);
    h.say(chat, "создавай");
    h.say(chat, "oh, and rename the endpoint");
    await h.settled();

    const [reply] = await h.notifications(chat, "task.already-approved");
    expect(reply).toMatchObject({ taskId: task.id, params: { taskId: task.id } });
    expect(await h.turnTexts(task.id)).toHaveLength(1);
    expect(await h.jobs("dev", task.id)).toHaveLength(1);
  });

  it("suggests /skip when the turn limit is reached", async () => {
    const chat = 2005;
    h.say(chat, "make it faster");
    await h.settled();
    const task = await h.onlyTask(chat);
    await h.transition(task.id, {
      type: "analyst.asked",
      questions: ["Which service?"],
      consumedTurns: 1,
      forced: false,
    });
    h.say(chat, "the API");
    await h.settled();
    await h.transition(task.id, {
      type: "analyst.asked",
      questions: ["Which endpoint?"],
      consumedTurns: 1,
      forced: false,
    });
    h.say(chat, "all of them");
    await h.settled();

    const [limit] = await h.notifications(chat, "task.turn-limit");
    expect(limit?.params).toEqual({ taskId: task.id, maxTurns: 2 });
    expect(await h.turnTexts(task.id)).toEqual(["make it faster", "the API"]);
  });
});

describe("draft buttons", () => {
  it("approves by button once: a double press gives one approval, one dev job and a toast", async () => {
    const chat = 2006;
    const task = await h.readyTask(chat);
    const draft = await h.showDraftButtons(chat, task.id);
    const first = h.press(chat, draft, formatCallbackData({ action: "approve", taskId: task.id }));
    const second = h.press(chat, draft, formatCallbackData({ action: "approve", taskId: task.id }));
    await h.settled();

    expect((await h.onlyTask(chat)).status).toBe("approved");
    expect(await h.jobs("dev", task.id)).toHaveLength(1);
    expect(await h.notifications(chat, "task.approved")).toHaveLength(1);
    expect(h.fake.callbackAnswer(first)).toEqual({ showAlert: false });
    expect(h.fake.callbackAnswer(second)?.text).toMatch(/already approved/);
    // The duplicate is answered by the toast alone: nothing else lands in the chat.
    expect((await h.notifications(chat)).map((n) => n.template)).toEqual([
      "task.draft-ready",
      "task.approved",
    ]);
  });

  it("answers 'go' typed after the button with one already-approved reply and no second job", async () => {
    const chat = 2007;
    const task = await h.readyTask(chat);
    const draft = await h.showDraftButtons(chat, task.id);
    h.press(chat, draft, formatCallbackData({ action: "approve", taskId: task.id }));
    h.say(chat, "go");
    await h.settled();

    expect(await h.jobs("dev", task.id)).toHaveLength(1);
    expect(await h.notifications(chat, "task.approved")).toHaveLength(1);
    expect(await h.notifications(chat, "task.already-approved")).toHaveLength(1);
  });

  it("Edit asks for the changes and the next text goes back to the analyst", async () => {
    const chat = 2008;
    const task = await h.readyTask(chat);
    const draft = await h.showDraftButtons(chat, task.id);
    const press = h.press(chat, draft, formatCallbackData({ action: "edit", taskId: task.id }));
    await h.settled();
    expect(await h.notifications(chat, "task.edit-prompt")).toHaveLength(1);
    expect(h.fake.callbackAnswer(press)).toEqual({ showAlert: false });

    h.say(chat, "use /healthz instead");
    await h.settled();
    expect(await h.onlyTask(chat)).toMatchObject({ status: "collecting", analysing: true });
    expect(await h.turnTexts(task.id)).toEqual(["Add a health endpoint to acme/api", "use /healthz instead"]);
  });

  it("Edit on an older draft after /start makes that draft the one free text goes to", async () => {
    const chat = 2012;
    const draft = await h.readyTask(chat);
    const message = await h.showDraftButtons(chat, draft.id);
    h.say(chat, "/start");
    h.press(chat, message, formatCallbackData({ action: "edit", taskId: draft.id }));
    h.say(chat, "rename it to /livez");
    await h.settled();

    const [older, newer] = await h.tasks(chat);
    expect(older).toMatchObject({ id: draft.id, status: "collecting" });
    expect(await h.turnTexts(draft.id)).toEqual(["Add a health endpoint to acme/api", "rename it to /livez"]);
    expect(newer).toMatchObject({ status: "draft" });
    expect(await h.turnTexts(newer?.id as number)).toEqual([]);
  });

  it("Cancel cancels the draft; a second press only gets a toast", async () => {
    const chat = 2009;
    const task = await h.readyTask(chat);
    const draft = await h.showDraftButtons(chat, task.id);
    h.press(chat, draft, formatCallbackData({ action: "cancel", taskId: task.id }));
    const again = h.press(chat, draft, formatCallbackData({ action: "cancel", taskId: task.id }));
    await h.settled();

    expect((await h.onlyTask(chat)).status).toBe("cancelled");
    expect(await h.notifications(chat, "task.cancelled")).toHaveLength(1);
    expect(h.fake.callbackAnswer(again)?.text).toMatch(/nothing to cancel/);
  });

  it("ignores a button of another chat's task but still answers it", async () => {
    const chat = 2010;
    const other = await h.readyTask(2011);
    await h.readyTask(chat);
    const draft = await h.showDraftButtons(chat, other.id);
    const press = h.press(chat, draft, formatCallbackData({ action: "approve", taskId: other.id }));
    await h.settled();

    expect(h.fake.callbackAnswer(press)).toEqual({ showAlert: false });
    expect((await h.onlyTask(2011)).status).toBe("ready");
    expect(await h.jobs("dev", other.id)).toHaveLength(0);
  });
});

describe("allowlist", () => {
  it("refuses a stranger once and stores nothing of theirs", async () => {
    h.say(STRANGER, "hello");
    h.say(STRANGER, "/start");
    h.say(STRANGER, "please?");
    await h.settled();

    const refusals = await h.notifications(STRANGER);
    expect(refusals.map((n) => ({ template: n.template, taskId: n.taskId }))).toEqual([
      { template: "bot.not-allowed", taskId: null },
    ]);
    expect(await h.jobs("notify")).toContainEqual(
      expect.objectContaining({ id: `notification-${refusals[0]?.id}` }),
    );
    expect(await h.tasks(STRANGER)).toEqual([]);
    expect(await h.prisma.telegramChat.findUnique({ where: { chatId: BigInt(STRANGER) } })).toBeNull();
  });

  it("serves an allowed user in a chat that is not on the list", async () => {
    h.say(GROUP, "/start", MEMBER);
    const greeting = await h.waitForNotification(GROUP, "bot.greeting");
    const task = await h.onlyTask(GROUP);
    expect(greeting.params).toEqual({ taskId: task.id });
    expect(task.userId).toBe(BigInt(MEMBER));
  });
});
