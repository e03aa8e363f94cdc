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

/** Bull Board behind a reverse proxy (issue 21.2): TRUST_PROXY names it, and its clients are told apart. */
let database: TestDatabase;
let redis: TestRedis;
let host: RunningHost;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
  host = await startHost({
    name: "ingress",
    services: [ingressService],
    // The test connects over loopback: loopback is the proxy.
    env: serviceTestEnv(database, redis, { BULL_BOARD_PASSWORD: "board-secret", TRUST_PROXY: "loopback" }),
    handleSignals: false,
  });
});
afterAll(async () => {
  await host?.shutdown("test done");
  await redis?.cleanup();
  await database?.drop();
});

const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`;
const QUEUES = "/admin/queues/api/queues";

/** A request the proxy forwards for `client`, over real HTTP. */
const viaProxy = async (password: string, client: string) =>
  (await fetch(`${host.url}${QUEUES}`, { headers: { authorization: basic(password), "x-forwarded-for": client } })).status;

describe("Bull Board login behind a trusted proxy", () => {
  it("locks out the guessing client only, not every client of the proxy", async () => {
    const guesser = "203.0.113.7";
    for (let i = 0; i < 10; i++) expect(await viaProxy(`guess-${i}`, guesser)).toBe(401);
    expect(await viaProxy("guess-10", guesser)).toBe(429);
    expect(await viaProxy("board-secret", guesser)).toBe(429);
    // Another person behind the same proxy still gets in, and a wrong guess of theirs is only a 401.
    expect(await viaProxy("board-secret", "198.51.100.2")).toBe(200);
    expect(await viaProxy("typo", "198.51.100.3")).toBe(401);
  });

  it("ignores X-Forwarded-For from a peer that is not the proxy", async () => {
    const stranger = "192.0.2.50";
    const spoofing = (password: string, i: number) =>
      host.http.inject({
        method: "GET",
        url: QUEUES,
        remoteAddress: stranger,
        headers: { authorization: basic(password), "x-forwarded-for": `198.51.100.${100 + i}` },
      });
    for (let i = 0; i < 10; i++) expect((await spoofing("wrong", i)).statusCode).toBe(401);
    expect((await spoofing("wrong", 10)).statusCode).toBe(429);
    expect((await spoofing("board-secret", 11)).statusCode).toBe(429);
  });
});
