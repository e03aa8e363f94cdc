import { signBody } from "@ratatoskr/gitea";
import { giteaJson } from "@ratatoskr/testkit";
import Fastify from "fastify";
import { describe, expect, it, vi } from "vitest";
import { capturedLogger } from "./support/captured-logger.ts";
import { coalescedDispatch } from "../src/gitea/store/coalesced-dispatch.ts";
import type { IncomingCommand } from "../src/gitea/store/command-acceptor.ts";
import { GITEA_WEBHOOK_PATH, registerGiteaWebhook } from "../src/gitea/webhook/gitea-webhook.route.ts";

const SECRET = "route-gitea-secret";

/** The route alone on a bare app, its log lines captured, accepting every command as new. */
async function routeUnderTest() {
  const { logger, lines, raw } = capturedLogger();
  const accepted: IncomingCommand[] = [];
  const app = Fastify({ logger: false });
  await registerGiteaWebhook(app, {
    secret: SECRET,
    bodyLimitBytes: 64 * 1024,
    botLogin: () => "bot",
    logger,
    async accept(command) {
      accepted.push(command);
      return { status: "accepted" };
    },
    stored: () => undefined,
  });
  await app.ready();
  return { app, lines, raw, accepted };
}

const body = giteaJson({
  action: "created",
  issue: { id: 1, number: 1, title: "t", pull_request: null },
  comment: { id: 77, body: "/agent plan PRIVATE-TEXT", user: { id: 9, login: "alice" }, html_url: "x" },
  repository: { id: 1, name: "web", full_name: "acme/web", owner: { id: 2, login: "acme" } },
  sender: { id: 9, login: "alice" },
  is_pull: false,
});

describe("gitea webhook route", () => {
  it("logs every 401 with its reason and delivery, never the body or the presented signature", async () => {
    const r = await routeUnderTest();
    const forgedSignature = signBody(body, "guess");
    const forged = await r.app.inject({
      method: "POST",
      url: GITEA_WEBHOOK_PATH,
      payload: body,
      headers: { "x-gitea-event": "issue_comment", "x-gitea-delivery": "d-1", "x-gitea-signature": forgedSignature },
    });
    const missing = await r.app.inject({
      method: "POST",
      url: GITEA_WEBHOOK_PATH,
      payload: body,
      headers: { "x-gitea-event": "issue_comment", "x-gitea-delivery": "d-2" },
    });
    expect([forged.statusCode, missing.statusCode]).toEqual([401, 401]);
    expect(r.accepted).toEqual([]);
    const refusals = r.lines.filter((l) => l.msg === "gitea delivery refused: bad signature");
    expect(refusals.map((l) => [l.deliveryId, l.reason])).toEqual([
      ["d-1", "signature wrong"],
      ["d-2", "signature missing"],
    ]);
    const log = r.raw.join("");
    expect(log).not.toContain("PRIVATE-TEXT");
    expect(log).not.toContain(forgedSignature);
    await r.app.close();
  });
});

describe("gitea webhook route: who is speaking", () => {
  it("takes a Forgejo delivery, which may carry only X-Forgejo-* headers (G8)", async () => {
    const r = await routeUnderTest();
    const res = await r.app.inject({
      method: "POST",
      url: GITEA_WEBHOOK_PATH,
      payload: body,
      headers: {
        "x-forgejo-event": "issue_comment",
        "x-forgejo-event-type": "issue_comment",
        "x-forgejo-delivery": "fj-1",
        "x-forgejo-signature": signBody(body, SECRET),
      },
    });
    expect(res.statusCode).toBe(202);
    expect(r.accepted.map((c) => [c.deliveryId, c.commentId, c.kind])).toEqual([["fj-1", 77, "plan"]]);
    const forged = await r.app.inject({
      method: "POST",
      url: GITEA_WEBHOOK_PATH,
      payload: body,
      headers: { "x-forgejo-event": "issue_comment", "x-forgejo-signature": signBody(body, "guess") },
    });
    expect(forged.statusCode).toBe(401);
    await r.app.close();
  });
});

describe("coalesced dispatch", () => {
  const row = (id: number) => ({
    id,
    taskId: id,
    queue: "intake",
    jobId: `${id}-route-0`,
    data: {},
    createdAt: new Date(),
    dispatchedAt: null,
  });

  it("dispatches what was accepted in one turn in one call, after that turn", async () => {
    const calls: number[][] = [];
    const dispatch = coalescedDispatch(
      async (rows) => void calls.push(rows.map((r) => r.id)),
      () => undefined,
    );
    dispatch([row(1), row(2)]);
    dispatch([]);
    dispatch([row(3)]);
    expect(calls).toEqual([]);
    await vi.waitFor(() => expect(calls).toEqual([[1, 2, 3]]));
    dispatch([row(4)]);
    await vi.waitFor(() => expect(calls).toEqual([[1, 2, 3], [4]]));
  });

  it("holds what is accepted while a dispatch is under way and sends it together in the next one", async () => {
    const calls: number[][] = [];
    const failures: number[][] = [];
    const settle: Array<(err?: Error) => void> = [];
    const dispatch = coalescedDispatch(
      (rows) => {
        calls.push(rows.map((r) => r.id));
        return new Promise<void>((resolve, reject) => settle.push((err) => (err ? reject(err) : resolve())));
      },
      (_err, rows) => failures.push(rows.map((r) => r.id)),
    );
    dispatch([row(1)]);
    await vi.waitFor(() => expect(calls).toEqual([[1]]));
    // Accepted in three later turns while the first dispatch still waits for Redis and Postgres.
    for (const id of [2, 3, 4]) {
      dispatch([row(id)]);
      await new Promise((r) => setImmediate(r));
    }
    expect(calls).toEqual([[1]]);
    settle.shift()!();
    await vi.waitFor(() => expect(calls).toEqual([[1], [2, 3, 4]]));
    // One accepted behind a dispatch that fails still goes out; only the failed rows are reported.
    dispatch([row(5)]);
    settle.shift()!(new Error("redis away"));
    await vi.waitFor(() => expect(calls).toEqual([[1], [2, 3, 4], [5]]));
    expect(failures).toEqual([[2, 3, 4]]);
    settle.shift()!();
  });

  it("reports a failed dispatch with its rows, for the reconciler to take over", async () => {
    const failures: Array<[string, number[]]> = [];
    const dispatch = coalescedDispatch(
      async () => Promise.reject(new Error("redis away")),
      (err, rows) => failures.push([(err as Error).message, rows.map((r) => r.id)]),
    );
    dispatch([row(5)]);
    await vi.waitFor(() => expect(failures).toEqual([["redis away", [5]]]));
  });
});
