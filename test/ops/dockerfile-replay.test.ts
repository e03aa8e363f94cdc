import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServiceProcess } from "@ratatoskr/testkit";
import { createTestRedis, dropSchema, testSchemaName, type TestRedis } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { replayDockerfile, type ReplayResult } from "./dockerfile-replay.ts";

/**
 * The image, built without a Docker engine: the Dockerfile's own steps replayed in a scratch
 * directory from the repository's files (slow: a real `pnpm install` and `pnpm build`, ~50 s),
 * then the result run as the image's user with nothing from this checkout.
 */
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const IMAGE_UID = "1000";
const asImageUser = (args: string[]) => [
  "--reuid",
  IMAGE_UID,
  "--regid",
  IMAGE_UID,
  "--clear-groups",
  ...args,
];

describe("Dockerfile, replayed", () => {
  let scratch: string;
  let image: ReplayResult;
  let redis: TestRedis;
  const schema = testSchemaName();
  const databaseUrl = inject("databaseUrl");

  /** Only what the image and its orchestrator give a container: no NODE_OPTIONS, no checkout. */
  const containerEnv = (extra: Record<string, string>) => ({
    PATH: `${image.workdir}/node_modules/.bin:${process.env.PATH}`,
    HOME: image.map("/home/node"),
    ...image.env,
    WORKSPACE_DIR: image.map(image.env["WORKSPACE_DIR"] ?? "/workspaces"),
    ...extra,
  });

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "ratatoskr-image-"));
    chmodSync(scratch, 0o755);
    image = replayDockerfile(REPO_ROOT, scratch);
    mkdirSync(image.map("/home/node"), { recursive: true });
    execFileSync("chown", [`${IMAGE_UID}:${IMAGE_UID}`, image.map("/home/node")]);
    redis = createTestRedis();
  }, 240_000);

  afterAll(async () => {
    await redis?.cleanup();
    await dropSchema(databaseUrl, schema);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("runs node directly under tini as a non-root user who owns the workspace volume", () => {
    expect(image.entrypoint).toEqual(["/usr/bin/tini", "--"]);
    expect(image.cmd[0]).toBe("node");
    expect(image.user).toBe("node");
    expect(statSync(image.map(image.env["WORKSPACE_DIR"]!)).uid).toBe(Number(IMAGE_UID));
  });

  it("ships a runnable opencode", () => {
    const version = execFileSync("setpriv", asImageUser(["opencode", "--version"]), {
      cwd: image.workdir,
      env: containerEnv({}),
    }).toString();
    expect(version.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("migrates a database and starts a service from the compiled output, which stops cleanly on SIGTERM", async () => {
    const env = containerEnv({
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: schema,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: redis.prefix,
    });
    const migrated = execFileSync("setpriv", asImageUser(["node", "packages/db/dist/cli/migrate.js"]), {
      cwd: image.workdir,
      env,
    });
    expect(migrated.toString()).toContain(`schema "${schema}": applied`);

    const notifier = await startServiceProcess("notifier", {
      env,
      command: {
        file: "setpriv",
        args: asImageUser(["node", "services/notifier/dist/main.js"]),
        cwd: image.workdir,
      },
    });
    try {
      const ready = await fetch(`${notifier.url}/health/ready`);
      expect(ready.status, notifier.output()).toBe(200);
    } finally {
      expect(await notifier.stop("SIGTERM"), notifier.output()).toBe(0);
    }
  }, 60_000);
});
