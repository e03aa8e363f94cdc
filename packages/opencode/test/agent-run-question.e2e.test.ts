import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaltedTurnError, NO_PERSON_ANSWER, QuestionPolicyError } from "../src/index.ts";
import { marker, startOpencodeFixture, type OpencodeFixture } from "./support/opencode-fixture.ts";
import { recordingClient } from "./support/recording-client.ts";

const RUN = { agent: "judge", idleTimeoutMs: 15_000, hardTimeoutMs: 25_000 };
const ASK = reply.tool("question", {
  questions: [{ question: "Which color?", header: "Color", options: [{ label: "red", description: "r" }, { label: "blue", description: "b" }] }],
});

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

/** The text opencode sent the model as the question tool's result. */
function toolResultFor(m: string): string {
  const request = fx.model.requests.find((r) => r.isToolResult && r.userTexts.some((t) => t.includes(m)));
  return JSON.stringify(request?.messages.at(-1)?.content ?? "");
}

describe("questions in a headless run", () => {
  it("answers a question by default with 'no person is available; decide and state your assumption'", async () => {
    const m = marker("ask-default");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [ASK, reply.text("assumed blue")] });
    const result = await fx.client.runAgent({ ...RUN, directory: fx.sharedDir, prompt: `pick ${m}`, policy: {} });

    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe("ok");
    expect(result.output).toBe("assumed blue");
    expect(toolResultFor(m)).toContain(NO_PERSON_ANSWER);
  });

  it("reports a turn halted by a rejected question by its halt, long before the idle timeout, with backed-off polls", async () => {
    const m = marker("ask-reject");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [ASK, reply.text("never reached")] });
    const rec = recordingClient(fx);
    try {
      const result = await rec.client.runAgent({ ...RUN, directory: fx.sharedDir, prompt: `pick ${m}`, policy: { answerQuestion: () => undefined } });
      const returnedAt = Date.now();
      const rejectAt = rec.sent.find((s) => s.route.endsWith("/reject"))?.at;

      expect(result.outcome).toBe("failed");
      expect(result.error).toBeInstanceOf(HaltedTurnError);
      expect(result.error?.message).toMatch(/halted without finishing its turn \(the policy rejected the question "Which color\?"\)/);
      expect(rejectAt).toBeDefined();
      // About 1 s on a quiet machine, 2 s seen at load 15; the idle timeout (15 s) is the bound
      // that tells a halt seen by its halt from one seen only by the run going quiet.
      expect(returnedAt - (rejectAt as number)).toBeLessThan(RUN.idleTimeoutMs / 3);
      // Confirming the halt: a handful of requests, not one every 25 ms.
      const after = rec.sentSince(rejectAt as number).filter((s) => !s.route.startsWith("GET /api/event"));
      expect(after.length).toBeLessThanOrEqual(14);
    } finally {
      await rec.close();
    }
  });

  it("fails with QuestionPolicyError when the answer callback throws, and rejects the question", async () => {
    const m = marker("ask-throw");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [ASK, reply.text("never reached")] });
    const rec = recordingClient(fx);
    try {
      const result = await rec.client.runAgent({
        ...RUN,
        directory: fx.sharedDir,
        prompt: `pick ${m}`,
        policy: {
          answerQuestion: () => {
            throw new Error("answer store offline");
          },
        },
      });

      expect(result.outcome).toBe("failed");
      expect(result.error).toBeInstanceOf(QuestionPolicyError);
      expect(result.error?.message).toBe(`answering the agent's question "Which color?" failed: answer store offline`);
      expect(rec.sent.some((s) => s.route.endsWith("/reject"))).toBe(true);
    } finally {
      await rec.close();
    }
  });
});
