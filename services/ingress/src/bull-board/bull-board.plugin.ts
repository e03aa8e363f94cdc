import fastifyBasicAuth from "@fastify/basic-auth";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { Queue } from "bullmq";
import type { FastifyInstance } from "fastify";
import { sameSecret } from "../security/same-secret.ts";

export const BULL_BOARD_PATH = "/admin/queues";

export interface BullBoardOptions {
  queues: readonly Queue[];
  user: string;
  password: string;
  readOnly: boolean;
}

/** Bull Board for every queue, in its own encapsulated context behind basic auth. */
export async function registerBullBoard(app: FastifyInstance, opts: BullBoardOptions): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: opts.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: opts.readOnly })),
    serverAdapter,
  });
  await app.register(async (scope) => {
    await scope.register(fastifyBasicAuth, {
      authenticate: { realm: "Ratatoskr queues" },
      validate: async (user, password) => {
        // Evaluate both so the time taken does not tell which one was wrong.
        const userOk = sameSecret(user, opts.user);
        const passwordOk = sameSecret(password, opts.password);
        if (!userOk || !passwordOk) throw new Error("invalid credentials");
      },
    });
    scope.addHook("onRequest", scope.basicAuth);
    await scope.register(serverAdapter.registerPlugin(), { prefix: BULL_BOARD_PATH });
  });
}
