import { createServer } from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { isOutageError, outageDelayMs } from "../src/index.ts";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function caught(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
}

describe("isOutageError", () => {
  it("takes Postgres refusing connections for an outage, as pg throws it", async () => {
    const port = await closedPort();
    const err = await caught(() => new pg.Client({ host: "127.0.0.1", port, user: "x" }).connect());
    expect(isOutageError(err)).toBe(true);
  });

  it("takes Prisma's 'can't reach database server' for an outage, wrapped or not", () => {
    const prisma = Object.assign(new Error("Invalid `prisma.task.findMany()` invocation: Can't reach database server at 127.0.0.1:5432"), {
      name: "PrismaClientKnownRequestError",
      code: "P1001",
      meta: { driverAdapterError: { name: "DriverAdapterError", cause: { kind: "DatabaseNotReachable" } } },
    });
    expect(isOutageError(prisma)).toBe(true);
    expect(isOutageError(new Error("analysis failed", { cause: prisma }))).toBe(true);
    expect(isOutageError({ name: "DriverAdapterError", cause: { kind: "ConnectionClosed" } })).toBe(true);
    expect(isOutageError(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(true);
  });

  it("leaves other failures to the job's attempts: data errors, and another client's unreachable server", async () => {
    const port = await closedPort();
    const fetchFailed = await caught(() => fetch(`http://127.0.0.1:${port}/`));
    expect(isOutageError(fetchFailed)).toBe(false);
    expect(isOutageError(new Error(`opencode serve unreachable at http://127.0.0.1:${port}`, { cause: fetchFailed }))).toBe(false);
    expect(isOutageError(Object.assign(new Error("value out of range"), { code: "22003" }))).toBe(false);
    expect(isOutageError(Object.assign(new Error("Unique constraint failed"), { code: "P2002" }))).toBe(false);
    expect(isOutageError(new Error("telegram answered 502"))).toBe(false);
  });

  it("backs off from the first delay, doubling, up to ten times it", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => outageDelayMs(n, 100))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
