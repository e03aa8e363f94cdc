import { GiteaClient } from "@ratatoskr/gitea";
import { createOpencodeClient } from "@ratatoskr/opencode";
import { PermanentError, startPeriodicTask, type JobHandler } from "@ratatoskr/runtime";
import type { ServiceContext } from "@ratatoskr/service-host";
import type { FastifyInstance } from "fastify";
import type { GiteaIngressConfig } from "./config/gitea.config.ts";
import { createIntakeHandler } from "./intake/intake.handler.ts";
import type { IntakeDeps, SessionInterrupter } from "./intake/intake-deps.ts";
import { failOrphanedRuns } from "./intake/running-recovery.ts";
import { startIntakeSweep } from "./sweep/intake-sweep.ts";
import { coalescedDispatch } from "./store/coalesced-dispatch.ts";
import { createCommandAcceptor } from "./store/command-acceptor.ts";
import { createCommandInbox } from "./store/command-inbox.ts";
import { drainRequester } from "./store/drain-request.ts";
import { sweepRepository } from "./sweep/comment-sweeper.ts";
import { registerGiteaWebhook } from "./webhook/gitea-webhook.route.ts";

const RECOVERY_INTERVAL_MS = 15_000;
/** How often stored commands nobody made into tasks (a crash after the answer) are looked for. */
const INBOX_SWEEP_INTERVAL_MS = 5_000;

export interface GiteaFrontDoor {
  intake: JobHandler<"intake">;
  routes(app: FastifyInstance): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function interrupter(password: string | undefined): SessionInterrupter {
  return async (serverUrl, sessionId) => {
    const client = createOpencodeClient({ baseUrl: serverUrl, ...(password ? { password } : {}) });
    try {
      await client.interrupt(sessionId);
    } finally {
      await client.close();
    }
  };
}

/** The Gitea front door (G1–G7 intake side): webhook route, intake worker, sweep, restart recovery. */
export function giteaFrontDoor(
  ctx: ServiceContext,
  config: Extract<GiteaIngressConfig, { enabled: true }>,
  options: { maxRounds: number; budgetUsd: number | null; opencodePassword?: string },
): GiteaFrontDoor {
  const logger = ctx.logger.child({ component: "gitea" });
  const gitea = new GiteaClient({ baseUrl: config.url, token: config.token });
  let botLogin = config.botLogin ?? "";
  const accept = createCommandAcceptor(ctx.db.pool, { code: options.maxRounds, plan: config.planRounds });
  const dispatchRows = coalescedDispatch(
    (followUps) => ctx.dispatcher.dispatch(followUps),
    (err, followUps) =>
      logger.warn(
        { err, taskIds: [...new Set(followUps.map((f) => f.taskId))] },
        "accepted commands not queued yet; the reconciler will",
      ),
  );
  const inbox = createCommandInbox({ pool: ctx.db.pool, dispatch: dispatchRows, logger });
  // Stored commands become tasks where intake jobs are taken: here, or (a replica that only
  // answers webhooks) wherever the job that asks for it is taken, so answering costs no more.
  const takesJobs = ctx.takesJobs("ingress");
  const stored = takesJobs
    ? () => inbox.kick()
    : drainRequester({
        enqueue: (request) => ctx.queues.enqueue(request),
        newestStored: accept.newestStored,
        onError: (err, upTo) =>
          logger.warn({ err, upTo }, "stored gitea commands not announced; the periodic pass makes their tasks"),
      });
  const deps: IntakeDeps = {
    repos: ctx.repos,
    db: ctx.db,
    queues: ctx.queues,
    gitea,
    transition: (taskId, event, opts) => ctx.transition(taskId, event, opts),
    interrupt: interrupter(options.opencodePassword),
    maxRunning: config.maxRunning,
    budgetUsd: options.budgetUsd,
    logger,
  };
  const stops: Array<() => Promise<void>> = [];
  const prefix = ctx.config.queue.prefix;
  return {
    intake: createIntakeHandler(deps, () => inbox.drain()),
    routes: (app) =>
      registerGiteaWebhook(app, {
        secret: config.webhookSecret,
        bodyLimitBytes: config.bodyLimitBytes,
        botLogin: () => botLogin,
        accept,
        stored,
        logger,
      }),
    start: async () => {
      if (!botLogin) {
        botLogin = (await gitea.currentUser()).login ?? "";
        if (!botLogin) throw new PermanentError("Gitea did not name the token's user; set GITEA_BOT_LOGIN");
        logger.info({ botLogin }, "gitea bot account discovered");
      }
      // The pass after a crash (or a drain job Redis lost) runs where tasks are made.
      if (takesJobs)
        stops.push(
          startPeriodicTask({
            name: "gitea-command-inbox",
            intervalMs: INBOX_SWEEP_INTERVAL_MS,
            logger,
            run: async () => void (await inbox.drain()),
          }),
          inbox.idle,
        );
      if (takesJobs)
        stops.push(
          startIntakeSweep({
            prisma: ctx.db.prisma,
            queues: ctx.queues,
            dispatcher: ctx.dispatcher,
            transition: deps.transition,
            logger,
            ...config.sweep,
            intake: deps,
          }),
        );
      stops.push(
        startPeriodicTask({
          name: "gitea-running-recovery",
          intervalMs: RECOVERY_INTERVAL_MS,
          logger,
          run: async () => void (await failOrphanedRuns(deps, ctx.redis, prefix)),
        }),
      );
      if (config.sweepIntervalMs > 0 && config.repos.length > 0) {
        const sweepDeps = { gitea, repos: ctx.repos, botLogin: () => botLogin, accept, stored, logger };
        stops.push(
          startPeriodicTask({
            name: "gitea-comment-sweep",
            intervalMs: config.sweepIntervalMs,
            logger,
            run: async () => {
              for (const where of config.repos) await sweepRepository(sweepDeps, where);
            },
          }),
        );
      }
    },
    stop: async () => {
      await Promise.all(stops.splice(0).map((stop) => stop()));
    },
  };
}
