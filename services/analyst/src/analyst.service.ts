import { QUEUE } from "@ratatoskr/contracts";
import { checkOpencodeAtStart, createOpencodeClientFromConfig } from "@ratatoskr/opencode";
import { defineService } from "@ratatoskr/service-host";
import { ANALYST_CONFIG_SCHEMA, loadAnalystConfig } from "./config/analyst.config.ts";
import { join } from "node:path";
import { activeJobTasks, createTaskGit, ensureSharedAgentDir, startGitWorkspaceRelease, warmSharedAgentDir } from "@ratatoskr/pipeline";
import { createAnalyseTurnHandler } from "./handlers/analyse-turn.handler.ts";
import { createGiteaPlanHandler } from "./gitea/gitea-plan.handler.ts";
import { startAnalysisSweeper } from "./maintenance/analysis-sweeper.ts";
import { createRepositoryDirectory } from "./repositories/repository-directory.factory.ts";

/** Clarifies requests with the analyst agent (dialogue turns) and plans Gitea issues with the planner. */
export const analystService = defineService({
  name: "analyst",
  queues: [QUEUE.analyst],
  configSchema: ANALYST_CONFIG_SCHEMA,
  checkConfig: (env) => void loadAnalystConfig(env),
  defaultConcurrency: 4,
  async create(ctx) {
    const config = loadAnalystConfig(ctx.env);
    const logger = ctx.logger.child({ component: "analyst" });
    const client = createOpencodeClientFromConfig(config.opencode, logger);
    ctx.shutdown.register("connections", "opencode client", () => client.close());
    const repositories = createRepositoryDirectory(config.repositories, logger);
    if (repositories)
      logger.info({ repositories: repositories.description }, "draft repositories are checked to exist");
    await checkOpencodeAtStart(client, logger, "analyst");
    const directory = await ensureSharedAgentDir(config.workspace.dir, "analyst");
    let stopWarming: (() => void) | undefined;

    const handler = createAnalyseTurnHandler({
      repos: ctx.repos,
      transition: (taskId, event, options) => ctx.transition(taskId, event, options),
      opencode: client,
      repositories,
      directory,
      idleTimeoutMs: config.analyst.idleTimeoutMs,
      hardTimeoutMs: config.analyst.hardTimeoutMs,
      maxQuestions: config.analyst.maxQuestions,
    });
    let stopSweeper: (() => Promise<void>) | undefined;
    // Gitea plans: the planner reads the repository in its own working tree (never pushed).
    const gitConfig = { ...config.repositories, workspaceDir: config.workspace.dir, giteaUser: "ratatoskr", retentionMs: 86_400_000 };
    const git = createTaskGit(gitConfig, join(config.workspace.dir, "planner"), logger);
    let stopRelease: (() => Promise<void>) | undefined;
    const planner = createGiteaPlanHandler({
      repos: ctx.repos,
      transition: (taskId, event, options) => ctx.transition(taskId, event, options),
      opencode: client,
      git,
      redis: ctx.redis,
      prefix: ctx.config.queue.prefix,
      idleTimeoutMs: config.analyst.idleTimeoutMs,
      hardTimeoutMs: config.analyst.hardTimeoutMs,
      statusPollMs: 1_000,
    });
    return {
      // Two steps share the queue: the dialogue (a front phase) and the planner; the job says which.
      handlers: { [QUEUE.analyst]: (data, job) => (data.kind === "plan" || data.kind === "discuss" ? planner(data, job) : handler(data, job)) },
      // Redis can be lost; the analyses Postgres says are waiting are found and put right.
      async start() {
        // opencode boots the analyst's directory now, not in the first analysis (which shares the wait).
        stopWarming = warmSharedAgentDir(client, directory, logger);
        stopSweeper = startAnalysisSweeper({
          prisma: ctx.db.prisma,
          queues: ctx.queues,
          dispatcher: ctx.dispatcher,
          transition: (taskId, event, options) => ctx.transition(taskId, event, options),
          logger,
          intervalMs: config.sweep.intervalMs,
          graceMs: config.sweep.graceMs,
        });
        stopRelease = startGitWorkspaceRelease(gitConfig, { git, tasks: ctx.repos.tasks, inUse: activeJobTasks([ctx.queues.queues[QUEUE.analyst]]), logger }, "planner-workspace-release");
      },
      async stop() {
        stopWarming?.();
        await Promise.all([stopSweeper?.(), stopRelease?.()]);
      },
      checks: {
        opencode: async () => {
          await client.checkServer();
        },
      },
    };
  },
});
