import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { REQUIRED_ROUTES } from "../src/api/opencode-api.ts";
import { SilentSessionError, TESTED_OPENCODE_VERSION, VerdictValidationError } from "../src/index.ts";
import { DEV_PROMPT, JUDGE_PROMPT, marker, startOpencodeFixture, type OpencodeFixture } from "./support/opencode-fixture.ts";

const verdictSchema = z.object({ passed: z.boolean(), comments: z.array(z.string()) });
const RUN = { idleTimeoutMs: 10_000, hardTimeoutMs: 25_000, policy: { default: "deny" as const } };

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

describe("runAgent against a real opencode serve", () => {
  it("passes the start-up check of a current server", async () => {
    const info = await fx.client.checkServer();
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.url).toBe(fx.server.url);
  });

  it("runs the release whose routes the start-up check takes as read, and its /doc lists every route the client calls", async () => {
    // The check skips /doc for this release (server-check.ts): this is what makes that honest.
    const auth = { authorization: `Basic ${Buffer.from(`opencode:${fx.server.password}`).toString("base64")}` };
    const health = (await (await fetch(`${fx.server.url}/global/health`, { headers: auth })).json()) as { version: string };
    expect(health.version).toBe(TESTED_OPENCODE_VERSION);
    const doc = (await (await fetch(`${fx.server.url}/doc`, { headers: auth })).json()) as { paths: Record<string, Record<string, unknown>> };
    const listed = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toLowerCase()} ${path}`));
    expect(listed).toEqual(expect.arrayContaining(REQUIRED_ROUTES.map(([m, p]) => `${m} ${p}`)));
  });

  it("returns a validated JSON verdict and a complete trace", async () => {
    const m = marker("verdict");
    fx.model.addRule({ match: { promptIncludes: m, systemIncludes: JUDGE_PROMPT }, reply: [reply.text('Looks fine.\n```json\n{"passed": true, "comments": ["ok"]}\n```')] });
    const directory = fx.sharedDir;
    const result = await fx.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `review this ${m}`, schema: verdictSchema });

    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe("ok");
    expect(result.verdict).toEqual({ passed: true, comments: ["ok"] });
    expect(result.repaired).toBe(false);
    expect(result.sessionId).toMatch(/^ses/);
    expect(result.actualModel).toBe("fake/scripted");
    expect(result.warnings).toEqual([]);
    const t = result.trace;
    expect(t).toMatchObject({ sessionId: result.sessionId, serverUrl: fx.server.url, agent: "judge", model: "fake/scripted", outcome: "ok", prompt: `review this ${m}` });
    expect(t.output).toContain('"passed": true');
    expect(t.tokens.input).toBeGreaterThan(0);
    expect(t.tokens.output).toBeGreaterThan(0);
    expect(t.endedAt.getTime()).toBeGreaterThanOrEqual(t.startedAt.getTime());
    const seen = fx.model.requestsFor(result.sessionId as string);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.system).toContain(JUDGE_PROMPT);
    expect(seen[0]?.lastUserText).toContain(m);
  });

  it("runs a write tool call that really creates the file in the session's directory", async () => {
    const m = marker("write");
    fx.model.addRule({ match: { promptIncludes: m, systemIncludes: DEV_PROMPT }, reply: [reply.write("src/hello.txt", "hello from dev\n"), reply.text("done")] });
    const directory = await fx.server.makeWorkDir("write");
    const result = await fx.client.runAgent({ ...RUN, agent: "dev", directory, prompt: `implement ${m}` });

    expect(result.outcome).toBe("ok");
    expect(result.output).toBe("done");
    expect(readFileSync(join(directory, "src/hello.txt"), "utf8")).toBe("hello from dev\n");
    const seen = fx.model.requestsFor(result.sessionId as string);
    expect(seen.map((r) => r.isToolResult)).toEqual([false, true]);
  });

  it("answers a bash permission request with allow when the policy allows bash", async () => {
    const m = marker("bash-allow");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.bash("echo allowed > bash-allowed.txt"), reply.text("ran it")] });
    const directory = await fx.server.makeWorkDir("bash-allow");
    const result = await fx.client.runAgent({ ...RUN, agent: "dev", directory, prompt: `run ${m}`, policy: { permissions: { bash: "allow" } } });

    expect(result.outcome).toBe("ok");
    expect(fx.notices).toContain("permission bash → once");
    expect(readFileSync(join(directory, "bash-allowed.txt"), "utf8").trim()).toBe("allowed");
  });

  it("rejects a bash permission request by default and the agent still finishes", async () => {
    const m = marker("bash-deny");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.bash("echo nope > bash-denied.txt"), reply.text("could not run it")] });
    const directory = await fx.server.makeWorkDir("bash-deny");
    const result = await fx.client.runAgent({ ...RUN, agent: "dev", directory, prompt: `run ${m}` });

    expect(result.outcome).toBe("ok");
    expect(result.output).toBe("could not run it");
    expect(existsSync(join(directory, "bash-denied.txt"))).toBe(false);
    expect(fx.notices).toContain("permission bash → reject");
    const toolResult = fx.model.requestsFor(result.sessionId as string)[1]?.messages.at(-1);
    expect(toolResult?.role).toBe("tool");
    expect(JSON.stringify(toolResult)).toMatch(/Unable to execute command/);
  });

  it("repairs a malformed verdict with one prompt that names the problem", async () => {
    const m = marker("repair");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text('{"passed": "yes"'), reply.json({ passed: false, comments: ["fix the tests"] })] });
    const directory = fx.sharedDir;
    const result = await fx.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `review ${m}`, schema: verdictSchema });

    expect(result.outcome).toBe("ok");
    expect(result.repaired).toBe(true);
    expect(result.verdict).toEqual({ passed: false, comments: ["fix the tests"] });
    const seen = fx.model.requestsFor(result.sessionId as string);
    expect(seen).toHaveLength(2);
    expect(seen[1]?.lastUserText).toMatch(/could not be used: no JSON object found/);
  });

  it("repairs an invalid final verdict instead of returning an earlier valid draft", async () => {
    const m = marker("stale-draft");
    const answer = 'Draft: {"passed": true, "comments": []}\nHmm, {"passed": true was wrong after all.\nFinal: {"passed": false}';
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text(answer), reply.json({ passed: false, comments: ["tests fail"] })] });
    const result = await fx.client.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `review ${m}`, schema: verdictSchema });

    expect(result.outcome).toBe("ok");
    expect(result.repaired).toBe(true);
    expect(result.verdict).toEqual({ passed: false, comments: ["tests fail"] });
    expect(fx.model.requestsFor(result.sessionId as string)[1]?.lastUserText).toMatch(/schema mismatch: comments/);
  });

  it("fails with the validation error when the repaired answer is still invalid", async () => {
    const m = marker("repair-fail");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.json({ passed: "yes" }), reply.json({ passed: 1, comments: [] })] });
    const directory = fx.sharedDir;
    const result = await fx.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `review ${m}`, schema: verdictSchema });

    expect(result.outcome).toBe("failed");
    expect(result.error).toBeInstanceOf(VerdictValidationError);
    expect(result.error?.message).toMatch(/passed: .*boolean/);
    expect(fx.model.requestsFor(result.sessionId as string)[1]?.lastUserText).toMatch(/comments/);
    expect(result.trace.outcome).toBe("failed");
    expect(result.trace.error).toBe(result.error?.message);
  });

  it("detects a silent session (unknown model) fast and names the model and server", async () => {
    const directory = fx.sharedDir;
    const started = Date.now();
    const result = await fx.client.runAgent({ ...RUN, agent: "judge", directory, prompt: "anyone there?", model: "fake/missing-model" });

    expect(result.outcome).toBe("failed");
    expect(result.error).toBeInstanceOf(SilentSessionError);
    expect(result.error?.message).toContain("fake/missing-model");
    expect(result.error?.message).toContain(fx.server.url);
    expect(result.error?.message).toContain("lists no model");
    expect(result.sessionId).toMatch(/^ses/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("warns when the answering model differs from the pinned one", async () => {
    const m = marker("mismatch");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("first"), reply.text("second")] });
    const directory = fx.sharedDir;
    const first = await fx.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `one ${m}` });
    expect(first.outcome).toBe("ok");
    const before = fx.warnings.length;
    // Continuing the session keeps its model (fake/scripted) although this run pins another one.
    const second = await fx.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `two ${m}`, model: "fake/other", sessionId: first.sessionId as string });

    expect(second.outcome).toBe("ok");
    expect(second.output).toBe("second");
    expect(second.expectedModel).toBe("fake/other");
    expect(second.actualModel).toBe("fake/scripted");
    expect(second.warnings.join()).toMatch(/model mismatch.*fake\/scripted.*fake\/other/);
    expect(fx.warnings.slice(before).map((w) => w.message).join()).toMatch(/model mismatch/);
  });
});
