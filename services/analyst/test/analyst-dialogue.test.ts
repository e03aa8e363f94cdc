import { splitUntrusted } from "@ratatoskr/contracts";
import { reply, type ScriptTurn } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SKIP_NOTE } from "../src/prompt/analyst-prompt.ts";
import {
  AnalystHarness,
  EXISTING_REPO,
  MAX_QUESTIONS,
  marker,
  section,
  WAIT,
} from "./support/analyst-harness.ts";

/** Each message of a prompt section, in its fenced block: [who, text]. */
const messages = (text: string) => splitUntrusted(text).blocks.map((b) => [b.label, b.body]);

let h: AnalystHarness;

beforeAll(async () => {
  h = await AnalystHarness.start();
}, 90_000);
afterAll(async () => {
  await h?.stop();
});

/** Answers analyst sessions whose *new* messages contain `mark` (history may repeat it later). */
function onNewMessage(mark: string, replies: ScriptTurn[]): void {
  h.model.addRule({
    name: mark,
    match: (req) =>
      req.system.includes(h.promptMark) && section(req.userTexts[0] ?? "", "newMessages").includes(mark),
    reply: replies,
  });
}

const draft = {
  title: "Add a health endpoint",
  goal: "GET /health answers 200 with a JSON status.",
  why: "The load balancer needs a health check.",
  acceptanceCriteria: ["GET /health returns 200", "Other routes are unchanged"],
};

describe("analyst: one dialogue turn through the real opencode serve", () => {
  it("asks at most ANALYST_MAX_QUESTIONS questions and keeps collecting", async () => {
    const m = marker("ask");
    onNewMessage(m, [
      reply.json({
        phase: "ask",
        questions: ["Which endpoint?", "Which status code?", "Which format?"],
        reply: "Got it.",
      }),
    ]);
    const task = await h.startTask(`Add a health check ${m}`);

    const settled = await h.settled(task.id);
    expect(settled).toMatchObject({ status: "collecting", turnCount: 1, pendingTurns: 0 });
    const [notice, ...others] = await h.notifications(task.id);
    expect(others).toEqual([]);
    expect(notice).toMatchObject({
      template: "task.questions",
      params: { taskId: task.id, questions: "Which endpoint?\nWhich status code?" },
    });
    const turns = await h.prisma.dialogueTurn.findMany({
      where: { taskId: task.id },
      orderBy: { id: "asc" },
    });
    expect(turns.map((t) => [t.role, t.analysedAt !== null])).toEqual([
      ["user", true],
      ["assistant", false],
    ]);
    expect(turns[1]?.text).toBe("Got it.\nWhich endpoint?\nWhich status code?");

    const [prompt] = h.analystPrompts(m);
    expect(messages(section(prompt!.lastUserText, "newMessages"))).toEqual([["New message from the person", `Add a health check ${m}`]]);
    expect(prompt!.lastUserText).toContain(`Ask at most ${MAX_QUESTIONS} questions.`);
    expect(prompt!.lastUserText).not.toContain(SKIP_NOTE);
  });

  it("records a trace of the run with its session, server, model and tokens", async () => {
    const m = marker("trace");
    onNewMessage(m, [reply.json({ phase: "ask", questions: ["Which repository?"] })]);
    const task = await h.startTask(`Fix the login ${m}`);
    await h.settled(task.id);

    const [trace, ...more] = await h.host.context.repos.traces.list(task.id);
    expect(more).toEqual([]);
    expect(trace).toMatchObject({
      agent: "analyst",
      outcome: "completed",
      serverUrl: h.opencode.url,
      model: "fake/scripted",
      error: null,
    });
    expect(trace?.sessionId).toMatch(/^ses/);
    expect(trace?.prompt).toContain(m);
    expect(trace?.output).toContain("Which repository?");
    expect(trace?.tokensInput).toBeGreaterThan(0);
    expect(trace?.tokensOutput).toBeGreaterThan(0);
    expect(trace?.endedAt?.getTime()).toBeGreaterThanOrEqual(trace!.startedAt.getTime());
  });

  it("makes the draft ready when it names an existing repository, and sends the whole dialogue on an edit", async () => {
    const m = marker("propose");
    onNewMessage(m, [
      reply.json({
        phase: "propose",
        draft: { ...draft, repos: [EXISTING_REPO] },
        reply: "Here is the draft.",
      }),
    ]);
    const task = await h.startTask(`Add /health to acme/web ${m}`);

    const ready = await h.settled(task.id);
    expect(ready).toMatchObject({ status: "ready", turnCount: 1, ...draft, repos: [EXISTING_REPO] });
    expect((await h.notifications(task.id)).map((n) => n.template)).toEqual(["task.draft-ready"]);
    expect(h.gitea.requests).toContainEqual({
      method: "GET",
      path: `/api/v1/repos/${EXISTING_REPO}`,
      authorized: true,
    });

    // An edit of the ready draft goes back through the analyst with the dialogue so far.
    const edit = marker("edit");
    onNewMessage(edit, [reply.json({ phase: "ready" })]);
    await h.say(task.id, `Looks good, ship it as is ${edit}`);
    const prompt = (await h.waitForPrompt(edit)).lastUserText;
    expect(section(prompt, "draft")).toContain(`title: ${draft.title}`);
    expect(section(prompt, "draft")).toContain(`- ${EXISTING_REPO}`);
    expect(messages(section(prompt, "history"))).toContainEqual(["Person", `Add /health to acme/web ${m}`]);
    expect(messages(section(prompt, "history"))).toContainEqual(["Analyst (your earlier answer)", "Here is the draft."]);
    expect(section(prompt, "newMessages")).toContain(edit);
    expect(section(prompt, "newMessages")).not.toContain(m);

    await vi.waitFor(async () => expect((await h.notifications(task.id)).length).toBe(2), WAIT);
    expect(await h.settled(task.id)).toMatchObject({ status: "ready", turnCount: 2, title: draft.title });
  });

  it("keeps collecting and names a repository that does not exist, storing the rest of the draft", async () => {
    const m = marker("missing-repo");
    onNewMessage(m, [
      reply.json({ phase: "propose", draft: { ...draft, repos: ["acme/nope", EXISTING_REPO] } }),
    ]);
    const task = await h.startTask(`Change acme/nope ${m}`);

    const settled = await h.settled(task.id);
    expect(settled).toMatchObject({ status: "collecting", turnCount: 1, title: draft.title, repos: [] });
    const notices = await h.notifications(task.id);
    expect(notices.map((n) => [n.template, n.params])).toEqual([
      ["task.repo-not-found", { taskId: task.id, missing: "acme/nope" }],
    ]);
    const said = await h.prisma.dialogueTurn.findFirst({ where: { taskId: task.id, role: "assistant" } });
    expect(said?.text).toContain("acme/nope");
  });

  it("asks which repository when a ready draft has none", async () => {
    const m = marker("no-repo");
    onNewMessage(m, [reply.json({ phase: "propose", draft })]);
    const task = await h.startTask(`Add a health endpoint ${m}`);

    const settled = await h.settled(task.id);
    expect(settled).toMatchObject({ status: "collecting", title: draft.title, goal: draft.goal, repos: [] });
    const [notice, ...others] = await h.notifications(task.id);
    expect(others).toEqual([]);
    expect(notice?.template).toBe("task.questions");
    expect(String((notice?.params as { questions: string }).questions)).toMatch(
      /Which repository.*owner\/name/,
    );
  });

  it("closes the task when the analyst aborts", async () => {
    const m = marker("abort");
    onNewMessage(m, [reply.json({ phase: "abort", reason: "This is small talk, not a change to code." })]);
    const task = await h.startTask(`How are you today? ${m}`);

    expect(await h.settled(task.id)).toMatchObject({ status: "aborted" });
    expect((await h.notifications(task.id)).map((n) => [n.template, n.params])).toEqual([
      ["task.aborted", { taskId: task.id, reason: "This is small talk, not a change to code." }],
    ]);
  });

  it("tells the agent to skip questions on /skip and produces the draft", async () => {
    const m = marker("skip");
    onNewMessage(m, [reply.json({ phase: "ask", questions: ["Which status code?"] })]);
    const task = await h.startTask(`Add /health to ${EXISTING_REPO} ${m}`);
    await h.settled(task.id);
    h.model.addRule({
      name: "forced draft",
      match: (req) =>
        req.system.includes(h.promptMark) &&
        req.lastUserText.includes(m) &&
        req.lastUserText.includes(SKIP_NOTE),
      reply: [reply.json({ phase: "propose", draft: { ...draft, repos: [EXISTING_REPO] } })],
    });

    await h.transition(task.id, { type: "user.skipped" });
    expect(await h.settled(task.id)).toMatchObject({
      status: "ready",
      skipRequested: false,
      repos: [EXISTING_REPO],
    });
    const prompts = h.analystPrompts(m);
    expect(prompts.map((p) => p.lastUserText.includes(SKIP_NOTE))).toEqual([false, true]);
  });

  it("coalesces turns that arrive while it thinks: one analysis for both, then one for the next", async () => {
    const [m1, m2, m3, m4] = [marker("t1"), marker("t2"), marker("t3"), marker("t4")];
    onNewMessage(m1, [reply.json({ phase: "ask", questions: ["First question?"] }, { delayMs: 1_500 })]);
    onNewMessage(m2, [reply.json({ phase: "ask", questions: ["Second question?"] }, { delayMs: 1_500 })]);
    onNewMessage(m4, [reply.json({ phase: "propose", draft: { ...draft, repos: [EXISTING_REPO] } })]);

    const task = await h.startTask(`First ${m1}`);
    await h.waitForPrompt(m1);
    await h.say(task.id, `Second ${m2}`);
    await h.say(task.id, `Third ${m3}`);
    await h.waitForPrompt(m2);
    await h.say(task.id, `Fourth ${m4}`);

    const settled = await h.settled(task.id);
    expect(settled).toMatchObject({ status: "ready", pendingTurns: 0, turnCount: 1 });
    const prompts = h.model.requests.filter(
      (r) => r.system.includes(h.promptMark) && r.lastUserText.includes(m1),
    );
    expect(prompts.map((p) => section(p.lastUserText, "newMessages").match(/\[\[t\d/g))).toEqual([
      ["[[t1"],
      ["[[t2", "[[t3"],
      ["[[t4"],
    ]);
    // The superseded answers were never sent, and not stored as if the person had seen them.
    expect((await h.notifications(task.id)).map((n) => n.template)).toEqual(["task.draft-ready"]);
    const turns = await h.prisma.dialogueTurn.findMany({
      where: { taskId: task.id },
      orderBy: { id: "asc" },
    });
    expect(turns.filter((t) => t.role === "user").every((t) => t.analysedAt !== null)).toBe(true);
    expect(turns.filter((t) => t.role === "assistant")).toHaveLength(1);
  });

  it("drops the result when the task is cancelled during the analysis", async () => {
    const m = marker("cancel");
    onNewMessage(m, [reply.json({ phase: "ask", questions: ["Too late?"] }, { delayMs: 1_500 })]);
    const task = await h.startTask(`Something ${m}`);
    await h.waitForPrompt(m);
    await h.transition(task.id, { type: "user.cancelled" });

    await vi.waitFor(
      async () => expect(await h.host.context.repos.traces.list(task.id)).toHaveLength(1),
      WAIT,
    );
    const job = await h.host.context.queues.queues.analyst.getJob(`${task.id}-analyst-1`);
    await vi.waitFor(async () => expect(await job?.isCompleted()).toBe(true), WAIT);
    expect((await h.notifications(task.id)).map((n) => n.template)).toEqual(["task.cancelled"]);
    expect(await h.prisma.dialogueTurn.count({ where: { taskId: task.id, role: "assistant" } })).toBe(0);
  });
});

describe("analyst: answers it cannot use", () => {
  it("repairs a malformed verdict with one repair prompt", async () => {
    const m = marker("repair");
    onNewMessage(m, [
      reply.text('{"phase":"ask","questions":["Which endpoint?"'),
      reply.json({ phase: "ask", questions: ["Which endpoint?"] }),
    ]);
    const task = await h.startTask(`Add an endpoint ${m}`);

    expect(await h.settled(task.id)).toMatchObject({ status: "collecting", turnCount: 1 });
    expect((await h.notifications(task.id)).map((n) => n.params)).toEqual([
      { taskId: task.id, questions: "Which endpoint?" },
    ]);
    const session = h.analystPrompts(m)[0]?.sessionId;
    const requests = h.model.requests.filter((r) => r.sessionId === session);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.lastUserText).toContain("could not be used");
  });

  it.each([
    { problem: "invalid-json", answers: ["I think we should add it.", "Sure, adding it!"] },
    { problem: "no-phase", answers: ['{"questions":["a?"]}', '{"questions":["a?"]}'] },
    { problem: "unknown-phase", answers: ['{"phase":"maybe"}', '{"phase":"maybe"}'] },
    {
      problem: "invalid-fields",
      answers: ['{"phase":"propose","draft":{"ac":"x"}}', '{"phase":"propose","draft":{"ac":"x"}}'],
    },
  ])(
    "tells the person $problem after a second unusable answer and releases the task",
    async ({ problem, answers }) => {
      const m = marker(problem);
      onNewMessage(
        m,
        answers.map((text) => reply.text(text)),
      );
      const task = await h.startTask(`Do something ${m}`);

      expect(await h.settled(task.id)).toMatchObject({
        status: "collecting",
        analysing: false,
        turnCount: 0,
        pendingTurns: 1,
      });
      expect((await h.notifications(task.id)).map((n) => [n.template, n.params])).toEqual([
        ["task.analyst-error", { taskId: task.id, problem, then: "waiting" }],
      ]);
      const [trace] = await h.host.context.repos.traces.list(task.id);
      expect(trace).toMatchObject({ outcome: "failed" });
      expect(trace?.error).toContain("verdict invalid");
    },
  );

  it("is not stuck after a failed analysis: the next message is analysed together with the unanswered one", async () => {
    const [first, second] = [marker("lost"), marker("again")];
    h.model.addRule({
      name: "first try",
      match: (req) => {
        const fresh = section(req.userTexts[0] ?? "", "newMessages");
        return req.system.includes(h.promptMark) && fresh.includes(first) && !fresh.includes(second);
      },
      reply: [reply.text("no json"), reply.text("still no json")],
    });
    const task = await h.startTask(`First try ${first}`);
    await h.settled(task.id);
    h.model.addRule({
      name: "second try",
      match: (req) =>
        req.system.includes(h.promptMark) && section(req.lastUserText, "newMessages").includes(second),
      reply: [reply.json({ phase: "ask", questions: ["Which repository?"] })],
    });

    await h.say(task.id, `Second try ${second}`);
    const prompt = (await h.waitForPrompt(second)).lastUserText;
    expect(section(prompt, "newMessages")).toContain(first);
    expect(await h.settled(task.id)).toMatchObject({ status: "collecting", turnCount: 1, pendingTurns: 0 });
    expect((await h.notifications(task.id)).map((n) => n.template)).toEqual([
      "task.analyst-error",
      "task.questions",
    ]);
  });
});

describe("analyst: readiness", () => {
  it("reports opencode ready when its server passes the version gate", async () => {
    const res = await fetch(`${h.host.url}/health/ready`);
    const body = (await res.json()) as { checks: Record<string, string> };
    expect(res.status).toBe(200);
    expect(body.checks.opencode).toBe("ok");
  });
});
