import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SilentSessionError } from "../src/index.ts";
import { recordingClient } from "./support/recording-client.ts";
import { marker, startOpencodeFixture, type OpencodeFixture } from "./support/opencode-fixture.ts";

const RUN = { idleTimeoutMs: 10_000, hardTimeoutMs: 25_000, policy: { default: "deny" as const } };

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

describe("requests a run makes", () => {
  it("warms a fresh directory once for concurrent runs and lists no permissions when none is pending", async () => {
    const m = marker("quiet");
    fx.model.addRule({
      match: { promptIncludes: m },
      reply: [
        reply.text("one", { delayMs: 300 }),
        reply.text("two", { delayMs: 300 }),
        reply.text("three", { delayMs: 300 }),
      ],
    });
    const directory = await fx.server.makeWorkDir("warm-once");
    const rec = recordingClient(fx);
    try {
      const results = await Promise.all(
        [1, 2, 3].map((i) =>
          rec.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `run ${i} ${m}` }),
        ),
      );
      expect(results.map((r) => r.outcome)).toEqual(["ok", "ok", "ok"]);
      // One shared wait asks whether the directory has the run's provider yet: one question at a
      // time (each waits ≥ 50 ms after an answer), never one per run.
      const probes = rec.sent.filter((s) => s.route === "GET /api/provider/fake").map((s) => s.at);
      expect(probes.length).toBeGreaterThan(0);
      for (let i = 1; i < probes.length; i++)
        expect((probes[i] as number) - (probes[i - 1] as number)).toBeGreaterThanOrEqual(40);
      const readiness = () =>
        rec.sent.filter((s) => s.route === "GET /api/provider/fake" || s.route === "GET /api/model").length;
      const before = readiness();
      expect(
        (await rec.client.runAgent({ ...RUN, agent: "judge", directory, prompt: `again ${m}` })).outcome,
      ).toBe("ok");
      expect(readiness()).toBe(before);
      expect(rec.sent.filter((s) => /\/(permission|question)$/.test(s.route))).toEqual([]);
    } finally {
      await rec.close();
    }
  }, 45_000); // a fresh directory boots first (5-20 s on a loaded machine)

  it("still answers a permission request when the event stream is unavailable", async () => {
    const m = marker("no-events");
    fx.model.addRule({
      match: { promptIncludes: m },
      reply: [reply.bash("echo polled > polled.txt"), reply.text("ran it")],
    });
    const directory = await fx.server.makeWorkDir("no-events");
    const rec = recordingClient(fx, { breakEvents: true });
    try {
      const result = await rec.client.runAgent({
        ...RUN,
        agent: "dev",
        directory,
        prompt: `run ${m}`,
        policy: { permissions: { bash: "allow" } },
      });
      expect(result.outcome).toBe("ok");
      expect(result.output).toBe("ran it");
      expect(rec.notices).toContain("permission bash → once");
      expect(rec.warnings).toContainEqual(
        expect.stringMatching(/event stream .* is not live: a streaming answer's text is seen only when its part ends, so an open part of a running session counts as progress and a model that stalls mid-answer is cut by the hard timeout \(25000 ms\), not the idle timeout \(10000 ms\)/),
      );
      expect(
        existsSync(join(directory, "polled.txt")) &&
          readFileSync(join(directory, "polled.txt"), "utf8").trim(),
      ).toBe("polled");
    } finally {
      await rec.close();
    }
  });

  it("does not cut an answer that streams longer than the idle timeout when the event stream is unavailable", async () => {
    const m = marker("long-stream");
    // 40 chunks 450 ms apart: the answer streams for ~18 s, more than twice the idle timeout, and
    // opencode shows its text only once the part ends. Until a poll sees the part open the idle
    // clock runs, as for a model slow to its first token: at load ~15 the polls saw up to 2.9 s
    // go by first, and a 3 s and a 5 s idle timeout each cut this run once, so it is 8 s here.
    const idleTimeoutMs = 8_000;
    const answer = "streamed ".repeat(40).trim();
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text(answer, { chunks: 40, chunkDelayMs: 450 })] });
    const directory = await fx.server.makeWorkDir("long-stream");
    const rec = recordingClient(fx, { breakEvents: true });
    try {
      await rec.client.warmDirectory(directory);
      const started = Date.now();
      const result = await rec.client.runAgent({ ...RUN, idleTimeoutMs, hardTimeoutMs: 45_000, agent: "judge", directory, prompt: `stream ${m}` });
      expect(result.error?.message).toBeUndefined();
      expect(result.outcome).toBe("ok");
      expect(result.output).toBe(answer);
      expect(Date.now() - started).toBeGreaterThan(idleTimeoutMs * 2);
    } finally {
      await rec.close();
    }
  }, 75_000);

  it("answers a permission request whose event never arrives (quiet check), so the run cannot hang", async () => {
    const m = marker("missed-ask");
    fx.model.addRule({
      match: { promptIncludes: m },
      reply: [reply.bash("echo late > late.txt"), reply.text("ran it late")],
    });
    const directory = await fx.server.makeWorkDir("missed-ask");
    const rec = recordingClient(fx, { hideEvents: "permission.v2.asked" });
    try {
      const result = await rec.client.runAgent({
        ...RUN,
        agent: "dev",
        directory,
        prompt: `run ${m}`,
        policy: { permissions: { bash: "allow" } },
      });
      expect(result.outcome).toBe("ok");
      expect(result.output).toBe("ran it late");
      expect(rec.notices).toContain("permission bash → once");
      expect(readFileSync(join(directory, "late.txt"), "utf8").trim()).toBe("late");
    } finally {
      await rec.close();
    }
  }, 40_000); // a fresh directory boots first (5-10 s on a loaded machine), then ≥ 5 s of quiet

  it("tells a silent session from a queued prompt when the event stream is unavailable (no wall-clock guess)", async () => {
    const directory = await fx.server.makeWorkDir("silent-no-events");
    const rec = recordingClient(fx, { breakEvents: true });
    try {
      const result = await rec.client.runAgent({
        ...RUN,
        agent: "judge",
        directory,
        prompt: "anyone there?",
        model: "fake/missing-model",
      });
      expect(result.outcome).toBe("failed");
      expect(result.error).toBeInstanceOf(SilentSessionError);
      expect(result.error?.message).toContain("fake/missing-model");
      // Whether the client learnt that opencode took the prompt up from the active list (a
      // glimpse of the session running) or from the history depends on timing; both paths are
      // pinned down in the completion-tracker and prompt-taken-up unit tests. What matters here: no
      // wall-clock guess, a typed "silent" verdict naming the model, without the event stream.
      expect(rec.sent.some((s) => s.route === "GET /api/event")).toBe(true);
    } finally {
      await rec.close();
    }
  }, 30_000);
});
