import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { applyMigrations } from "@ratatoskr/db";
import { dropSchema, testSchemaName } from "@ratatoskr/db/testing";
import { afterAll, describe, expect, inject, it, vi } from "vitest";

/** The init container every Kubernetes Deployment runs before its service (k8s/). */
const SCRIPT = fileURLToPath(new URL("../../deploy/wait-for-migrations.mjs", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const databaseUrl = inject("databaseUrl");
const schema = testSchemaName();

function start(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, WAIT_INTERVAL_MS: "200", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return { child, output: () => text };
}

afterAll(async () => {
  await dropSchema(databaseUrl, schema);
});

describe("deploy/wait-for-migrations.mjs", () => {
  it("waits while the schema lacks this image's migrations and exits 0 once the migrate job applied them", async () => {
    const { child, output } = start({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema });
    const exited = once(child, "exit");
    await vi.waitFor(() => expect(output()).toMatch(/waiting: .*is not migrated/), { timeout: 20_000 });
    expect(child.exitCode).toBeNull();
    await applyMigrations({ connectionString: databaseUrl, schema });
    const [code] = await exited;
    expect({ code, output: output() }).toMatchObject({
      code: 0,
      output: expect.stringContaining(`schema "${schema}": every migration of this image is applied`),
    });
  }, 40_000);

  it("gives up after WAIT_TIMEOUT_MS naming an unreachable Postgres, exit 1", async () => {
    const { child, output } = start({
      DATABASE_URL: "postgresql://postgres:pw@127.0.0.1:1/nothing",
      WAIT_TIMEOUT_MS: "500",
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(output()).toMatch(/gave up after 500 ms: Postgres at 127\.0\.0\.1:1\/nothing is unreachable/);
    expect(output()).not.toContain("pw@");
  }, 30_000);
});
