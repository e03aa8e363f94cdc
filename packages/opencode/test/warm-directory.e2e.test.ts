import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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

  it("boots a directory without installing anything where opencode's configuration lives (read-only to it)", async (ctx) => {
    // deploy/opencode/serve mounts them read-only in opencode's namespace; without bubblewrap there is none.
    if (!fx.server.sandboxed) ctx.skip();
    const directory = await fx.server.makeWorkDir("config-untouched");
    await fx.client.warmDirectory(directory);
    const m = marker("config-untouched");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("done")] });
    expect((await fx.client.runAgent({ ...RUN, directory, prompt: m })).outcome).toBe("ok");

    const configDirs = [fx.server.configDir, join(fx.server.rootDir, "xdg", "config", "opencode")];
    const mounts = readFileSync(`/proc/${opencodePid(fx.server.processGroup)}/mountinfo`, "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .map((fields) => ({ point: fields[4], options: (fields[5] ?? "").split(",") }));
    for (const dir of configDirs) expect(mounts.find((mount) => mount.point === dir)?.options, dir).toContain("ro");
    // Where it may write, opencode installs its plugin SDK at a directory's first boot (64 MB of npm packages).
    const installed = (dir: string) => readdirSync(dir).filter((name) => /^(node_modules|package(-lock)?\.json)$/.test(name));
    expect(configDirs.flatMap(installed)).toEqual([]);
  });
});

/** The opencode process itself among its group (launcher shells, bubblewrap, opencode). */
function opencodePid(group: number): number {
  const pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  const found = pids.find((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[2]) === group && readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("opencode");
    } catch {
      return false; // gone meanwhile
    }
  });
  if (!found) throw new Error(`no opencode process in group ${group}`);
  return Number(found);
}
