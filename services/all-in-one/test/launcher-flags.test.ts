import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");
const scripts = (path: string) => (JSON.parse(read(path)) as { scripts: Record<string, string> }).scripts;

/** The node flags a command line gives before the all-in-one's entry file. */
function nodeFlags(command: string): string[] {
  const match = /(?:^|exec |\s)node ((?:--\S+\s+)*)(?:services\/all-in-one\/)?dist\/main\.js/.exec(command);
  if (!match) throw new Error(`not a node launch of the all-in-one: ${command}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}

/**
 * The all-in-one's young generation is capped (V8's 16 MB semi-spaces, grown while start-up
 * loads every module, stay committed while idle: ~20 MB of RSS, issue 9) wherever it is launched.
 */
describe("all-in-one launchers", () => {
  const expected = ["--max-semi-space-size=4"];

  it("pass the same node flags in pnpm start, pnpm demo and the package's own start", () => {
    expect(nodeFlags(scripts("package.json").start!)).toEqual(expected);
    expect(nodeFlags(scripts("package.json").demo!)).toEqual(expected);
    expect(nodeFlags(scripts("services/all-in-one/package.json").start!)).toEqual(expected);
  });

  it("pass them in the image's default command", () => {
    const cmd = read("Dockerfile")
      .split("\n")
      .filter((line) => line.startsWith("CMD "))
      .at(-1)!;
    expect(nodeFlags((JSON.parse(cmd.slice(4)) as string[]).join(" "))).toEqual(expected);
  });
});
