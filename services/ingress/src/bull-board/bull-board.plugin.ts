import fastifyBasicAuth from "@fastify/basic-auth";
import type { Queue } from "bullmq";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sameSecret } from "../security/same-secret.ts";
import { LockedOutError, type LoginGuard } from "./login-guard.ts";

export const BULL_BOARD_PATH = "/admin/queues";

export interface BullBoardOptions {
  queues: readonly Queue[];
  user: string;
  password: string;
  readOnly: boolean;
  /** Counts failed logins per client and locks a guessing client out. */
  guard: LoginGuard;
  /** The full readiness report (with each failure's reason), shown to a logged-in operator. */
  readinessDetail?: () => Promise<unknown>;
}

/** Readiness with the reasons, for an operator behind the board's login (never on /health/ready). */
export const HEALTH_DETAIL_PATH = "/admin/health";

/** Hop-by-hop or recomputed headers, not copied between the two servers. */
const NOT_FORWARDED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "date"]);

function forwardable(headers: Record<string, unknown>): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (NOT_FORWARDED.has(name) || value === undefined) continue;
    kept[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return kept;
}

/**
 * Bull Board (its API, views and static UI) on a server of its own, built on first use: its
 * modules (~4 MB of live heap) are never loaded by an ingress nobody opens the board on.
 */
async function buildBoard(opts: BullBoardOptions): Promise<FastifyInstance> {
  const [{ createBullBoard }, { BullMQAdapter }, { FastifyAdapter }, { default: Fastify }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/fastify"),
    import("fastify"),
  ]);
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: opts.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: opts.readOnly })),
    serverAdapter,
  });
  const board = Fastify();
  await board.register(serverAdapter.registerPlugin(), { prefix: BULL_BOARD_PATH });
  await board.ready();
  return board;
}

/**
 * Bull Board for every queue under {@link BULL_BOARD_PATH}, behind basic auth. Requests that pass
 * the auth are handed, body untouched, to the board's own server, which is built on the first one.
 */
export async function registerBullBoard(app: FastifyInstance, opts: BullBoardOptions): Promise<void> {
  let board: Promise<FastifyInstance> | undefined;
  app.addHook("onClose", async () => {
    await (await board?.catch(() => undefined))?.close();
  });
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    // A failed build (say an import error) is tried again on the next request.
    board ??= buildBoard(opts).catch((err: unknown) => {
      board = undefined;
      throw err;
    });
    const res = await (
      await board
    ).inject({
      method: request.method as "GET",
      url: request.url,
      headers: forwardable(request.headers),
      ...(request.body === undefined ? {} : { payload: request.body as Buffer }),
    });
    return reply.code(res.statusCode).headers(forwardable(res.headers)).send(res.rawPayload);
  };
  await app.register(async (scope) => {
    await scope.register(fastifyBasicAuth, {
      authenticate: { realm: "Ratatoskr queues" },
      validate: async (user, password, request) => {
        // Evaluate both so the time taken does not tell which one was wrong.
        const userOk = sameSecret(user, opts.user);
        const passwordOk = sameSecret(password, opts.password);
        if (!userOk || !passwordOk) {
          await opts.guard.failed(request.ip, "wrong-credentials");
          throw new Error("invalid credentials");
        }
        // Right, but from a client locked out for guessing: refused until the lockout ends.
        await opts.guard.check(request.ip);
        await opts.guard.succeeded(request.ip);
      },
    });
    // A request without credentials is a browser's first visit as often as a guess: not counted
    // as a failure, but refused like any other while the client is locked out.
    scope.addHook("onRequest", async (request) => {
      if (request.headers.authorization === undefined) await opts.guard.check(request.ip);
    });
    scope.addHook("onRequest", scope.basicAuth);
    scope.setErrorHandler(async (error, _request, reply) => {
      if (error instanceof LockedOutError)
        return reply.code(429).header("retry-after", String(error.retryAfterS)).send({ error: error.message });
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      return reply.code(status).send({ error: status === 401 ? "unauthorized" : "request failed" });
    });
    if (opts.readinessDetail) {
      const detail = opts.readinessDetail;
      scope.get(HEALTH_DETAIL_PATH, async () => detail());
    }
    // The board parses bodies itself; here any body stays the bytes that came in.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    scope.all(BULL_BOARD_PATH, serve);
    scope.all(`${BULL_BOARD_PATH}/*`, serve);
  });
}
