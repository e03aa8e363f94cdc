import { reply, scriptedCost } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeSessionProgress } from "../src/index.ts";
import {
  DEV_PROMPT,
  marker,
  startOpencodeFixture,
  type OpencodeFixture,
} from "./support/opencode-fixture.ts";

const RUN = { idleTimeoutMs: 10_000, hardTimeoutMs: 25_000, policy: { default: "deny" as const } };

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

describe("sessionProgress (O6)", () => {
  it("reads a session's newest tool call, tokens and cost from the real server", async () => {
    const m = marker("progress");
    fx.model.addRule({
      match: { promptIncludes: m, systemIncludes: DEV_PROMPT },
      reply: [reply.write("notes.txt", "progress\n"), reply.text("done")],
    });
    const directory = await fx.server.makeWorkDir("progress");
    const result = await fx.client.runAgent({ ...RUN, agent: "dev", directory, prompt: `implement ${m}` });
    expect(result.outcome).toBe("ok");

    const progress = await fx.client.sessionProgress(result.sessionId as string);
    expect(progress.lastTool).toBe("write");
    expect(progress.steps).toBe(2);
    const t = result.trace.tokens;
    expect(progress.tokens).toBe(t.input + t.output + t.reasoning);
    expect(progress.costUsd).toBeCloseTo(result.trace.cost, 10);
  });

  it("prices the usage the model reports at the configured price (opencode reports $0 for a config-defined model)", async () => {
    const m = marker("priced");
    fx.model.addRule({
      match: { promptIncludes: m, systemIncludes: DEV_PROMPT },
      reply: [reply.write("priced.txt", "priced\n"), reply.text("done, and priced")],
    });
    const directory = await fx.server.makeWorkDir("priced");
    const result = await fx.client.runAgent({ ...RUN, agent: "dev", directory, prompt: `implement ${m}` });
    expect(result.outcome).toBe("ok");

    // Usage as an OpenAI-compatible provider streams it: asked for by opencode, sent in the last chunk.
    const requests = fx.model.requestsFor(result.sessionId as string);
    expect(requests).toHaveLength(2);
    expect(requests.every((r) => r.includeUsage && r.usage !== undefined)).toBe(true);
    const usage = requests.map((r) => r.usage!);
    expect(result.trace.tokens.input).toBe(usage.reduce((n, u) => n + u.prompt_tokens, 0));
    expect(result.trace.tokens.output).toBe(usage.reduce((n, u) => n + u.completion_tokens, 0));
    const expected = usage.reduce((usd, u) => usd + scriptedCost(u), 0);
    expect(expected).toBeGreaterThan(0);
    expect(result.trace.cost).toBeCloseTo(expected, 12);
    expect((await fx.client.sessionProgress(result.sessionId as string)).costUsd).toBeCloseTo(expected, 12);
  });

  it("has no tool and nothing spent before the agent answered", () => {
    expect(summarizeSessionProgress([])).toEqual({ lastTool: null, tokens: 0, costUsd: 0, steps: 0 });
  });
});
