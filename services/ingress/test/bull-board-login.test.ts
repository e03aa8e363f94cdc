import { startHost, type RunningHost } from "@ratatoskr/service-host";
import {
  createTestDatabase,
  createTestRedis,
  serviceTestEnv,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingressService } from "../src/index.ts";

/** Bull Board against guessing (issue 21.2): a lockout per client, every failure logged and counted. */
let database: TestDatabase;
let redis: TestRedis;
let host: RunningHost;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
  host = await startHost({
    name: "ingress",
    services: [ingressService],
    env: serviceTestEnv(database, redis, { BULL_BOARD_PASSWORD: "board-secret", LOG_LEVEL: "info" }),
    handleSignals: false,
    logDestination: { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
});
afterAll(async () => {
  await host?.shutdown("test done");
  await redis?.cleanup();
  await database?.drop();
});

const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`;
const board = (password: string | undefined, remoteAddress: string, url = "/admin/queues/api/queues") =>
  host.http.inject({
    method: "GET",
    url,
    remoteAddress,
    headers: password === undefined ? {} : { authorization: basic(password) },
  });

describe("Bull Board login", () => {
  it("locks a client out after 10 wrong passwords out of 1,000 tried at once, logging and counting each", async () => {
    const guesser = "203.0.113.7";
    const answers = await Promise.all(Array.from({ length: 1_000 }, (_, i) => board(`guess-${i}`, guesser)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(990);
    // Locked out: even the right password is refused, with when to come back.
    const right = await board("board-secret", guesser);
    expect(right.statusCode).toBe(429);
    expect(Number(right.headers["retry-after"])).toBeGreaterThan(0);
    expect((await board(undefined, guesser)).statusCode).toBe(429);
    // Another client is not affected.
    expect((await board("board-secret", "198.51.100.2")).statusCode).toBe(200);
    const failed = lines.filter((l) => l.msg === "login failed");
    expect(failed.length).toBeGreaterThanOrEqual(9);
    expect(failed.every((l) => l.client === guesser)).toBe(true);
    expect(lines.filter((l) => l.msg === "login locked out after repeated failures")).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain("guess-");
    const metrics = (await host.http.inject({ method: "GET", url: "/metrics" })).body;
    expect(metrics).toMatch(/ratatoskr_login_failures_total\{realm="bull-board",reason="wrong-credentials",service="ingress"\} 10/);
    expect(metrics).toMatch(/ratatoskr_login_failures_total\{realm="bull-board",reason="locked-out",service="ingress"\} \d{3}/);
  });

  it("forgets a client's failures once it logs in", async () => {
    const client = "198.51.100.9";
    for (let i = 0; i < 9; i++) expect((await board("wrong", client)).statusCode).toBe(401);
    expect((await board("board-secret", client)).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) expect((await board("wrong", client)).statusCode).toBe(401);
    expect((await board("board-secret", client)).statusCode).toBe(200);
  });

  it("ignores X-Forwarded-For without TRUST_PROXY: a guesser cannot pose as many clients", async () => {
    const guesser = "203.0.113.70";
    const posing = (password: string, i: number) =>
      host.http.inject({
        method: "GET",
        url: "/admin/queues/api/queues",
        remoteAddress: guesser,
        headers: { authorization: basic(password), "x-forwarded-for": `198.51.100.${100 + i}` },
      });
    for (let i = 0; i < 10; i++) expect((await posing("wrong", i)).statusCode).toBe(401);
    expect((await posing("wrong", 10)).statusCode).toBe(429);
    expect((await posing("board-secret", 11)).statusCode).toBe(429);
  });

  it("shows the readiness reasons to a logged-in operator only", async () => {
    const detail = await board("board-secret", "198.51.100.3", "/admin/health");
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({ status: "ok", checks: { redis: "ok", postgres: "ok" } });
    expect((await board(undefined, "198.51.100.3", "/admin/health")).statusCode).toBe(401);
  });
});
