import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SilentSessionError } from "../src/index.ts";
import { marker, startOpencodeFixture, type OpencodeFixture } from "./support/opencode-fixture.ts";
import { recordingClient } from "./support/recording-client.ts";

const RUN = { agent: "judge", policy: {}, idleTimeoutMs: 20_000, hardTimeoutMs: 60_000 };
/** The requests that wait for opencode to boot a location. */
const isBootCheck = (route: string) => route.startsWith("GET /api/provider") || route.startsWith("GET /api/model");

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

describe("warmDirectory (a directory booted before its first run)", () => {
  it("boots the directory ahead of time, so the first run there waits for no boot", async () => {
    const rec = recordingClient(fx);
    try {
      const directory = await fx.server.makeWorkDir("prewarmed");
      await rec.client.warmDirectory(directory);
      expect(rec.sent.filter((s) => isBootCheck(s.route)).length).toBeGreaterThan(0);

      const m = marker("prewarmed");
      fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("warm already")] });
      const since = Date.now();
      const result = await rec.client.runAgent({ ...RUN, directory, prompt: m });
      expect(result.outcome).toBe("ok");
      expect(result.output).toBe("warm already");
      expect(rec.sentSince(since).filter((s) => isBootCheck(s.route))).toEqual([]);
    } finally {
      await rec.close();
    }
  });

  it("waits for the directory again after a silent session there (the server may have lost it)", async () => {
    const rec = recordingClient(fx);
    try {
      const directory = await fx.server.makeWorkDir("forgotten");
      await rec.client.warmDirectory(directory);
      const silent = await rec.client.runAgent({ ...RUN, directory, prompt: "anyone?", model: "fake/missing-model" });
      expect(silent.error).toBeInstanceOf(SilentSessionError);

      const m = marker("rewarmed");
      fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("back")] });
      const since = Date.now();
      const result = await rec.client.runAgent({ ...RUN, directory, prompt: m });
      expect(result.outcome).toBe("ok");
      expect(rec.sentSince(since).filter((s) => isBootCheck(s.route)).length).toBeGreaterThan(0);
    } finally {
      await rec.close();
    }
  });
});
