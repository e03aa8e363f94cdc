import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "undici";
import { OpencodeApi } from "../src/api/opencode-api.ts";
import { OpencodeHttp } from "../src/http/opencode-http.ts";
import { ActivePoller } from "../src/run/active-poller.ts";
import { LocationWarmup } from "../src/run/location-warmup.ts";
import { createOpencodeClient, freePortForTests } from "./support/unreachable.ts";

const rejections: unknown[] = [];
const collect = (reason: unknown) => rejections.push(reason);
let blackHole: Server;
let blackHoleUrl: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  process.on("unhandledRejection", collect);
  // Accepts connections and never answers: every request hangs until its own timeout.
  blackHole = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  const address = blackHole.address();
  blackHoleUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  process.off("unhandledRejection", collect);
  for (const s of sockets) s.destroy();
  await new Promise((r) => blackHole.close(r));
});

async function settle(ms: number): Promise<void> {
  // Long enough for the abandoned shared requests (300 ms timeout) to fail and be reported.
  await new Promise((r) => setTimeout(r, ms));
}

const RUN = { agent: "judge", directory: "/tmp", prompt: "x", policy: {}, idleTimeoutMs: 5_000, hardTimeoutMs: 5_000 };

describe("no rejection goes unhandled when callers leave a shared wait", () => {
  it("a run whose signal is already aborted, against an unreachable server", async () => {
    const client = createOpencodeClient({ baseUrl: `http://127.0.0.1:${await freePortForTests()}`, requestTimeoutMs: 300 });
    try {
      const result = await client.runAgent({ ...RUN, signal: AbortSignal.abort() });
      expect(result.outcome).toBe("cancelled");
      await settle(800);
      expect(rejections).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("runs aborted while they share a directory warm-up on a server that never answers", async () => {
    const client = createOpencodeClient({ baseUrl: blackHoleUrl, requestTimeoutMs: 300 });
    try {
      const results = await Promise.all([1, 2].map(() => client.runAgent({ ...RUN, signal: AbortSignal.timeout(50) })));
      expect(results.map((r) => r.outcome)).toEqual(["cancelled", "cancelled"]);
      await settle(1_000);
      expect(rejections).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("the shared directory warm-up and active poll, entered with an already aborted signal", async () => {
    const dispatcher = new Agent();
    const api = new OpencodeApi(new OpencodeHttp({ baseUrl: `http://127.0.0.1:${await freePortForTests()}`, dispatcher, requestTimeoutMs: 300 }));
    try {
      await expect(new LocationWarmup(api).ready("/tmp", "fake", AbortSignal.abort())).rejects.toThrow();
      await expect(new ActivePoller((signal) => api.active(signal)).snapshotAfter(0, AbortSignal.abort())).rejects.toThrow();
      await settle(800);
      expect(rejections).toEqual([]);
    } finally {
      await dispatcher.close();
    }
  });
});
