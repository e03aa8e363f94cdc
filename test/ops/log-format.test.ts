import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** One service log line written by a real process, to a pipe or to a terminal (`script` gives a pty). */
const PROBE = fileURLToPath(new URL("./fixtures/log-line.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ESC = "\u001b[";

function logLine(env: Record<string, string>, terminal: boolean): string {
  const command = [process.execPath, "--import", "tsx", PROBE];
  const options = {
    cwd: ROOT,
    encoding: "utf8" as const,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
  };
  if (!terminal) return execFileSync(command[0]!, command.slice(1), options);
  return execFileSync("script", ["-qec", command.map((a) => `'${a}'`).join(" "), "/dev/null"], options);
}

describe("log format", () => {
  it("writes JSON lines to a pipe", () => {
    const out = logLine({}, false).trim();
    expect(JSON.parse(out)).toMatchObject({
      level: "info",
      service: "log-probe",
      taskId: 7,
      msg: "task moved",
    });
    expect(out).not.toContain("tg-secret-token");
  });

  it("writes coloured, readable lines on a terminal", () => {
    const out = logLine({}, true);
    expect(out).toContain(ESC);
    const plain = out.replaceAll(new RegExp(`${ESC.replace("[", "\\[")}[0-9;]*m`, "g"), "");
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: task moved/m);
    expect(plain).toMatch(/taskId: 7/);
    expect(() => JSON.parse(plain.trim())).toThrow();
    expect(out).not.toContain("tg-secret-token");
  });

  it("follows LOG_FORMAT: pretty in a pipe has no colours, json on a terminal stays JSON", () => {
    const pretty = logLine({ LOG_FORMAT: "pretty" }, false);
    expect(pretty).toMatch(/INFO: task moved/);
    expect(pretty).not.toContain(ESC);
    const json = logLine({ LOG_FORMAT: "json" }, true).trim();
    expect(JSON.parse(json)).toMatchObject({ msg: "task moved" });
  });
});
