import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");
const scripts = (path: string) => (JSON.parse(read(path)) as { scripts: Record<string, string> }).scripts;

/** The variables set and the node flags given before the all-in-one's entry file in a command line. */
function launch(command: string): { env: string[]; flags: string[] } {
  const match = /((?:\w+=\S+\s+)*)(?:exec )?node ((?:--\S+\s+)*)(?:services\/all-in-one\/)?dist\/main\.js/.exec(
    command,
  );
  if (!match) throw new Error(`not a node launch of the all-in-one: ${command}`);
  const words = (text: string | undefined) => (text ?? "").split(/\s+/).filter(Boolean);
  return { env: words(match[1]), flags: words(match[2]) };
}

/**
 * Wherever the all-in-one is launched, V8's young generation is capped (16 MB semi-spaces, grown
 * while start-up loads every module, stay committed while idle) and glibc keeps two malloc arenas:
 * together ~40 MB of idle RSS (issue 9, README).
 */
describe("all-in-one launchers", () => {
  const flags = ["--max-semi-space-size=1"];
  const arenas = "MALLOC_ARENA_MAX=2";

  it("pass the same variables and node flags in pnpm start, pnpm demo and the package's own start", () => {
    expect(launch(scripts("package.json").start!)).toEqual({ env: [arenas], flags });
    expect(launch(scripts("package.json").demo!)).toEqual({ env: ["RATATOSKR_DEMO=true", arenas], flags });
    expect(launch(scripts("services/all-in-one/package.json").start!)).toEqual({ env: [arenas], flags });
  });

  it("pass them in the image", () => {
    const lines = read("Dockerfile").split("\n");
    const cmd = lines.filter((line) => line.startsWith("CMD ")).at(-1)!;
    expect(launch((JSON.parse(cmd.slice(4)) as string[]).join(" ")).flags).toEqual(flags);
    const finalEnv = lines.filter((line) => line.startsWith("ENV ")).at(-1)!;
    expect(finalEnv.split(/\s+/)).toContain(arenas);
  });
});
