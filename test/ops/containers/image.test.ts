import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { containerTestsSkipReason, inspectImage, podman } from "./podman.ts";

/**
 * The production image as `scripts/containers.sh image` built it: what it ships, who it runs as,
 * how it starts its processes.
 */
const SKIP = containerTestsSkipReason("the production image");
const IMAGE = process.env["RATATOSKR_IMAGE"] ?? "ratatoskr:local";
const ROOT = new URL("../../../", import.meta.url);
const OPENCODE_VERSION = (
  JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as {
    devDependencies: Record<string, string>;
  }
).devDependencies["opencode-ai"];
const SERVICES = ["ingress", "analyst", "dev", "reviewer", "postmortem", "notifier", "all-in-one"];

const run = (...command: string[]) =>
  podman(["run", "--rm", "--entrypoint", "", IMAGE, ...command]).then((out) => out.trim());
const sh = (script: string) => run("sh", "-c", script);

describe.skipIf(SKIP !== undefined)(`the production image${SKIP ? ` — skipped: ${SKIP}` : ""}`, () => {
  it("runs as the non-root node user, with tini as PID 1 and node exec'd by it", async () => {
    const image = await inspectImage(IMAGE);
    expect(image.Config.User).toBe("node");
    expect(image.Config.Entrypoint).toEqual(["/usr/bin/tini", "--"]);
    expect(image.Config.Cmd[0]).toBe("node");
    expect(await run("id", "-u")).toBe("1000");
    // tini is PID 1 and runs the command itself, no shell between.
    const started = await podman(["run", "--rm", IMAGE, "cat", "/proc/1/cmdline"]);
    expect(started.split("\0").slice(0, 2)).toEqual(["/usr/bin/tini", "--"]);
  });

  it("ships the compiled services, the migrations and the agents, and no sources, tests or dev tools", async () => {
    for (const service of SERVICES)
      expect(await sh(`test -f services/${service}/dist/main.js && echo yes`), service).toBe("yes");
    expect(await sh("ls prisma/migrations | wc -l")).not.toBe("0");
    const agents = (await sh("ls deploy/opencode/agent")).split("\n");
    expect(agents).toEqual(expect.arrayContaining(["analyst.md", "dev.md", "reviewer.md", "postmortem.md"]));
    // No TypeScript source, no test, no test kit (fake Telegram, scripted model), no checkout files.
    expect(
      await sh(
        "find /app -path /app/node_modules -prune -o \\( -name '*.ts' -o -name test -o -name '*.test.*' \\) -print",
      ),
    ).toBe("");
    expect(await sh("ls /app")).toBe(
      [
        "deploy",
        "node_modules",
        "package.json",
        "packages",
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "prisma",
        "services",
      ].join("\n"),
    );
    expect(await sh("ls packages")).not.toContain("testkit");
    const store = (await sh("ls node_modules/.pnpm")).split("\n");
    for (const devTool of [
      "typescript@",
      "prisma@",
      "tsx@",
      "vitest@",
      "eslint@",
      "prettier@",
      "opencode-ai@",
      "testcontainers@",
    ])
      expect(
        store.filter((entry) => entry.startsWith(devTool)),
        devTool,
      ).toEqual([]);
    expect(await sh("command -v pnpm || echo none")).toBe("none");
  });

  it("runs the init containers' and the healthcheck's scripts with what the image ships", async () => {
    // Without a database to ask they stop at once, saying why (not on a module the image lacks).
    const wait = await podman(["run", "--rm", IMAGE, "node", "deploy/wait-for-migrations.mjs"]).catch(
      (e: Error) => e.message,
    );
    expect(wait).toContain("DATABASE_URL is not set");
    const health = await podman(["run", "--rm", IMAGE, "node", "deploy/healthcheck.mjs"]).catch(
      (e: Error) => e.message,
    );
    expect(health).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find/);
  });

  it("ships opencode's real binary, not a wrapper script, and bubblewrap for the tools' sandbox", async () => {
    expect(await run("opencode", "--version")).toBe(OPENCODE_VERSION);
    expect(await sh("head -c 4 $(command -v opencode) | od -An -c | tr -d ' '")).toBe("177ELF");
    expect(await run("bwrap", "--version")).toMatch(/^bubblewrap \d/);
  });

  it("stops opencode on SIGTERM: the signal reaches it through tini", async () => {
    const id = (
      await podman(["run", "-d", IMAGE, "opencode", "serve", "--hostname", "127.0.0.1", "--port", "4096"])
    ).trim();
    try {
      await podman([
        "exec",
        id,
        "sh",
        "-c",
        "for i in $(seq 1 100); do grep -q '^opencode' /proc/*/comm 2>/dev/null && exit 0; sleep 0.1; done; exit 1",
      ]);
      const stopping = Date.now();
      await podman(["stop", "-t", "20", id]);
      const [code] = (await podman(["inspect", "--format", "{{.State.ExitCode}}", id])).trim().split("\n");
      expect({ code, fast: Date.now() - stopping < 15_000 }).toEqual({ code: "143", fast: true });
    } finally {
      await podman(["rm", "-f", id]).catch(() => "");
    }
  }, 60_000);

  it("says in one line why the all-in-one cannot run the demo without a front door", async () => {
    const out = await podman(["run", "--rm", IMAGE]).catch((error: Error) => error.message);
    expect(out).toContain("demo mode is not in this build");
    expect(out).not.toMatch(/\n\s+at /);
  });
});
