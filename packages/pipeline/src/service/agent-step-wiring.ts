import { join } from "node:path";
import type { QUEUE } from "@ratatoskr/contracts";
import type { FollowUpDispatcher, PrismaClient, Repositories } from "@ratatoskr/db";
import type { GitWorkspaces } from "@ratatoskr/git";
import { checkOpencodeAtStart, createOpencodeClientFromConfig, type OpencodeClient, type OpencodeConfig } from "@ratatoskr/opencode";
import type { Logger, QueueSet, ReadinessCheck, Redis, ShutdownRegistry } from "@ratatoskr/runtime";
import type { GitHostConfig } from "../config/git-host.config.ts";
import { createTaskGit } from "../workspaces/task-git.ts";
import { activeJobTasks, startGitWorkspaceRelease } from "../workspaces/workspace-release.ts";
import { runningStep } from "../maintenance/pipeline-steps.ts";
import type { TransitionFn } from "../run/step-job.ts";
import { startStepSweeper } from "../maintenance/step-sweeper.ts";

/** What an agent step service takes from its host (the fields of service-host's ServiceContext it uses). */
export interface AgentStepHost {
  logger: Logger;
  shutdown: Pick<ShutdownRegistry, "register">;
  repos: Repositories;
  db: { prisma: PrismaClient };
  queues: QueueSet;
  dispatcher: FollowUpDispatcher;
  redis: Redis;
  config: { queue: { prefix: string } };
  transition: TransitionFn;
}

/** The variables every agent step service reads: its opencode servers, git host and sweep. */
export interface AgentStepConfig {
  /** OPENCODE_CONFIG_SCHEMA's values, the same as the analyst's and the postmortem's. */
  opencode: OpencodeConfig;
  git: GitHostConfig;
  sweep: { intervalMs: number; graceMs: number };
}

export interface AgentStepWiring {
  logger: Logger;
  /** What the step's Telegram and Gitea handlers both take. */
  deps: { repos: Repositories; transition: TransitionFn; opencode: OpencodeClient; git: GitWorkspaces };
  /** What a Gitea handler takes besides: Redis and the queue prefix the run heartbeat lives under. */
  heartbeat: { redis: Redis; prefix: string };
  /** The service instance's start, stop and readiness checks. */
  lifecycle: { start(): Promise<void>; stop(): Promise<void>; checks: Record<string, ReadinessCheck> };
}

/**
 * The wiring the dev and reviewer services share: an opencode client over every server of
 * OPENCODE_URLS (or OPENCODE_URL), closed on shutdown, the git
 * workspaces in the step's own subdirectory of WORKSPACE_DIR (named after its queue: the dev and
 * the reviewer may share WORKSPACE_DIR, and a review reads what was pushed, never the dev's
 * working trees), and the sweep that puts right the tasks waiting on a job of `queue` that Redis
 * lost or that gave up (Postgres is the truth).
 */
export function wireAgentStep(
  host: AgentStepHost,
  config: AgentStepConfig,
  step: { component: string; queue: typeof QUEUE.dev | typeof QUEUE.review },
): AgentStepWiring {
  const logger = host.logger.child({ component: step.component });
  const opencode = createOpencodeClientFromConfig(config.opencode, logger);
  host.shutdown.register("connections", "opencode client", () => opencode.close());
  const git = createTaskGit(config.git, join(config.git.workspaceDir, step.queue), logger);
  const transition: TransitionFn = (taskId, event, options) => host.transition(taskId, event, options);
  let stopSweeper: (() => Promise<void>) | undefined;
  let stopRelease: (() => Promise<void>) | undefined;
  return {
    logger,
    deps: { repos: host.repos, transition, opencode, git },
    heartbeat: { redis: host.redis, prefix: host.config.queue.prefix },
    lifecycle: {
      async start() {
        // As the analyst does: a server that is down or refused is said at start, and a passed
        // check makes the first readiness probe cheap.
        await checkOpencodeAtStart(opencode, logger, step.queue);
        stopSweeper = startStepSweeper(
          { dispatcher: host.dispatcher, logger, intervalMs: config.sweep.intervalMs, graceMs: config.sweep.graceMs, name: `${step.queue}-sweeper` },
          [runningStep({ prisma: host.db.prisma, queues: host.queues, transition }, step.queue)],
        );
        stopRelease = startGitWorkspaceRelease(
          config.git,
          { git, tasks: host.repos.tasks, inUse: activeJobTasks([host.queues.queues[step.queue]]), logger },
          `${step.queue}-workspace-release`,
        );
      },
      async stop() {
        await Promise.all([stopSweeper?.(), stopRelease?.()]);
      },
      checks: {
        opencode: async () => {
          await opencode.checkServer();
        },
      },
    },
  };
}
