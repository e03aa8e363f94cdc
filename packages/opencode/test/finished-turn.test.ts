import { describe, expect, it } from "vitest";
import type { SessionMessage } from "../src/api/api-schemas.ts";
import { finishedTurnOf } from "../src/run/finished-turn.ts";

/**
 * Reading the turn a session finished while no run watched it (the process running it died): the
 * answer a retry reuses instead of asking the model again. Messages come newest first, as
 * opencode lists them.
 */
let at = 0;
const user = (text: string): SessionMessage => ({ id: `u${++at}`, type: "user", time: { created: at }, text });
const step = (text: string, finish: string, extra: Partial<SessionMessage> = {}): SessionMessage => ({
  id: `a${++at}`,
  type: "assistant",
  time: { created: at, completed: at + 1 },
  content: text ? [{ type: "text", text }] : [],
  finish,
  cost: 0.25,
  tokens: { input: 100, output: 20, reasoning: 0 },
  model: { providerID: "fake", id: "scripted" },
  ...extra,
});
const newestFirst = (...oldestFirst: SessionMessage[]) => [...oldestFirst].reverse();

describe("the turn a session finished on its own", () => {
  it("is the answer after the newest asking of the prompt, its tool steps and a repair included, with what it cost", () => {
    const earlier = [user("review this"), step("old answer", "stop")];
    const turn = [user("review this"), step("", "tool-calls"), step("looks fine", "stop"), user("answer in JSON"), step('{"passed":true}', "stop")];
    const found = finishedTurnOf(newestFirst(...earlier, ...turn), "review this");
    expect(found).toMatchObject({ output: 'looks fine\n{"passed":true}', cost: 0.75, model: "fake/scripted" });
    expect(found?.tokens).toEqual({ input: 300, output: 60, reasoning: 0, cacheRead: 0, cacheWrite: 0 });
    expect(found?.endedAt).toEqual(new Date(turn.at(-1)!.time.completed!));
  });

  it("is none while the turn goes on, once it ended in an error or was cut short, or without the prompt", () => {
    const running = newestFirst(user("review this"), step("", "tool-calls"));
    const unfinished = newestFirst(user("review this"), { ...step("half", "stop"), time: { created: ++at }, finish: undefined });
    const failed = newestFirst(user("review this"), step("", "stop", { error: { name: "MessageAbortedError" } }));
    const unanswered = newestFirst(user("review this"));
    for (const messages of [running, unfinished, failed, unanswered]) expect(finishedTurnOf(messages, "review this")).toBeUndefined();
    expect(finishedTurnOf(newestFirst(user("something else"), step("{}", "stop")), "review this")).toBeUndefined();
  });
});
