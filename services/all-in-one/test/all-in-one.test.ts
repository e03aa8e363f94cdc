import { QUEUE_NAMES } from "@ratatoskr/contracts";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import {
  freePort,
  startTestOpencode,
  type OpencodeServer,
  type ScriptedModel,
} from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
  serviceTestEnv,
} from "@ratatoskr/testkit/vitest";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SERVICES } from "../src/services.ts";

let database: TestDatabase;
let redis: TestRedis;
let host: RunningHost;
let model: ScriptedModel;
let opencode: OpencodeServer;

function hostEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return serviceTestEnv(database, redis, {
    BULL_BOARD_PASSWORD: "board-secret",
    OPENCODE_URL: opencode.url,
    OPENCODE_SERVER_PASSWORD: opencode.password,
    ...extra,
  });
}

beforeAll(async () => {
  let agents;
  // The project's agents, though no agent runs here: the server the worker's other files share.
  [database, agents] = await Promise.all([createTestDatabase(), startTestOpencode({ agentsDir: fileURLToPath(new URL("../../../agents/", import.meta.url)) })]);
  ({ model, opencode } = agents);
  redis = createTestRedis();
  host = await startHost({
    name: "all-in-one",
    services: ALL_SERVICES,
    env: hostEnv(),
    handleSignals: false,
  });
});

afterAll(async () => {
  await host?.shutdown("test done");
  await Promise.allSettled([opencode?.stop(), model?.close()]);
  await redis?.cleanup();
  await database?.drop();
});

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("all-in-one", () => {
  it("runs every service in one process and reports ready", async () => {
    const ready = await fetch(`${host.url}/health/ready`);
    expect({ status: ready.status, body: await ready.json() }).toMatchObject({
      status: 200,
      body: { status: "ok", checks: { redis: "ok", postgres: "ok", opencode: "ok" } },
    });
    const workers = await Promise.all(QUEUE_NAMES.map((q) => host.context.queues.queues[q].getWorkers()));
    expect(workers.map((w) => w.length)).toEqual(QUEUE_NAMES.map(() => 1));
  });

  it("starts but stays not ready while opencode is unreachable", async () => {
    const env = hostEnv({ OPENCODE_URL: `http://127.0.0.1:${await freePort()}` });
    const blind = await startHost({ name: "all-in-one", services: ALL_SERVICES, env, handleSignals: false });
    try {
      const ready = await fetch(`${blind.url}/health/ready`);
      expect({ status: ready.status, body: await ready.json() }).toMatchObject({
        status: 503,
        body: { checks: { redis: "ok", postgres: "ok", opencode: "failed" } },
      });
      expect((await fetch(`${blind.url}/health/live`)).status).toBe(200);
    } finally {
      await blind.shutdown("test done");
    }
  });

  it("answers 401 to Bull Board without credentials or with wrong ones", async () => {
    const anonymous = await fetch(`${host.url}/admin/queues/api/queues`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic/);
    const wrong = await fetch(`${host.url}/admin/queues/api/queues`, {
      headers: { authorization: basic("admin", "guess") },
    });
    expect(wrong.status).toBe(401);
  });

  it("lists the six queues on Bull Board with credentials", async () => {
    const res = await fetch(`${host.url}/admin/queues/api/queues`, {
      headers: { authorization: basic("admin", "board-secret") },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { queues: Array<{ name: string }> };
    expect(body.queues.map((q) => q.name).sort()).toEqual([...QUEUE_NAMES].sort());
    const page = await fetch(`${host.url}/admin/queues/`, {
      headers: { authorization: basic("admin", "board-secret") },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<html");
    const stylesheet = /href="(static\/[^"]+\.css)"/.exec(html)?.[1];
    const css = await fetch(`${host.url}/admin/queues/${stylesheet}`, {
      headers: { authorization: basic("admin", "board-secret") },
    });
    expect({ status: css.status, type: css.headers.get("content-type") }).toMatchObject({
      status: 200,
      type: expect.stringMatching(/^text\/css/),
    });
    expect((await css.text()).length).toBeGreaterThan(1000);
  });

  it("passes Bull Board's actions and their JSON bodies through to the queues", async () => {
    const auth = { authorization: basic("admin", "board-secret") };
    const queue = host.context.queues.queues.notify;
    const pause = await fetch(`${host.url}/admin/queues/api/queues/pause`, { method: "PUT", headers: auth });
    expect(pause.status).toBe(200);
    try {
      expect(await queue.isPaused()).toBe(true);
      const added = await fetch(`${host.url}/admin/queues/api/queues/${queue.name}/add`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "board-probe", data: { from: "bull board" }, options: {} }),
      });
      expect(added.status).toBe(200);
      const { job } = (await added.json()) as { job: { id: string } };
      const stored = await queue.getJob(job.id);
      expect({ name: stored?.name, data: stored?.data }).toEqual({ name: "board-probe", data: { from: "bull board" } });
      await stored?.remove();
    } finally {
      const resume = await fetch(`${host.url}/admin/queues/api/queues/resume`, { method: "PUT", headers: auth });
      expect(resume.status).toBe(200);
    }
    expect(await queue.isPaused()).toBe(false);
  });

  it("exposes Prometheus metrics with queue depth", async () => {
    const res = await fetch(`${host.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const queue of QUEUE_NAMES)
      expect(text).toContain(`ratatoskr_queue_jobs{queue="${queue}",state="waiting"`);
  });

  it("refuses to start Bull Board without a password unless disabled", async () => {
    const env = hostEnv({ BULL_BOARD_PASSWORD: "" });
    await expect(
      startHost({ name: "all-in-one", services: ALL_SERVICES, env, handleSignals: false }),
    ).rejects.toThrow(/BULL_BOARD_PASSWORD is required to serve Bull Board/);
    const disabled = await startHost({
      name: "all-in-one",
      services: ALL_SERVICES,
      env: { ...env, BULL_BOARD_DISABLED: "true" },
      handleSignals: false,
    });
    try {
      expect((await fetch(`${disabled.url}/admin/queues/api/queues`)).status).toBe(404);
    } finally {
      await disabled.shutdown("test done");
    }
  });

  it("names every missing or invalid variable in one message without echoing secrets", async () => {
    const env = hostEnv({ REDIS_URL: "", DATABASE_URL: "mysql://root:hunter2@db/x", HTTP_PORT: "eighty" });
    const start = startHost({ name: "all-in-one", services: ALL_SERVICES, env, handleSignals: false });
    await expect(start).rejects.toThrow(/REDIS_URL[\s\S]*DATABASE_URL[\s\S]*HTTP_PORT/);
    await expect(start).rejects.not.toThrow(/hunter2/);
  });
});
