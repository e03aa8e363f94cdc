import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentMessageError, classifyProviderFailure, ProviderError } from "../src/index.ts";
import { marker, startOpencodeFixture, warmSharedDir, type OpencodeFixture } from "./support/opencode-fixture.ts";

const RUN = { agent: "judge", idleTimeoutMs: 20_000, hardTimeoutMs: 40_000, policy: {} };

describe("classifyProviderFailure", () => {
  it("reads the status opencode reports and says whether retrying can help", () => {
    expect(classifyProviderFailure('Provider request failed with HTTP 401: {"error":{}}')).toEqual({ status: 401, retryable: false });
    expect(classifyProviderFailure("Provider request failed with HTTP 429: slow down")).toEqual({ status: 429, retryable: true });
    expect(classifyProviderFailure("Provider request failed with HTTP 503: busy")).toEqual({ status: 503, retryable: true });
    expect(classifyProviderFailure("Provider request failed with HTTP 400: bad")).toEqual({ status: 400, retryable: false });
    expect(classifyProviderFailure("connect ECONNREFUSED 127.0.0.1:1")).toEqual({ status: undefined, retryable: true });
    expect(classifyProviderFailure("The tool was aborted")).toBeUndefined();
  });
});

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
  await warmSharedDir(fx);
}, 90_000);
afterAll(async () => {
  await fx?.stop();
});

describe("provider failures against a real server", () => {
  it("fails fast on 401 with one error kind naming the provider and the credentials", async () => {
    const m = marker("p401");
    fx.model.addRule({ match: { promptIncludes: m }, reply: Array(5).fill(reply.httpError(401, "bad key")) });
    const started = Date.now();
    const result = await fx.client.runAgent({ ...RUN, directory: fx.sharedDir, prompt: `go ${m}` });

    expect(result.outcome).toBe("failed");
    expect(result.error).toBeInstanceOf(ProviderError);
    expect(result.error).toBeInstanceOf(AgentMessageError);
    expect(result.error).toMatchObject({ provider: "fake", status: 401, retryable: false });
    expect(result.error?.message).toMatch(/^opencode session ses_\w+ ended with an error: provider fake rejected the credentials \(HTTP 401\): check its API key/);
    expect(fx.model.requests.filter((r) => r.lastUserText.includes(m))).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("marks a 5xx as retryable, with status and provider", async () => {
    const m = marker("p503");
    fx.model.addRule({ match: { promptIncludes: m }, reply: Array(10).fill(reply.httpError(503, "overloaded")) });
    const result = await fx.client.runAgent({ ...RUN, directory: fx.sharedDir, prompt: `go ${m}` });

    expect(result.error).toBeInstanceOf(ProviderError);
    expect(result.error).toMatchObject({ provider: "fake", status: 503, retryable: true });
    expect(result.error?.message).toMatch(/provider fake failed with HTTP 503 \(retryable\)/);
  }, 60_000);
});
