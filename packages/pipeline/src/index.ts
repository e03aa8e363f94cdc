/**
 * @ratatoskr/pipeline — what the services that run coding agents on a task share: the git host
 * configuration, the task's working trees, traced agent runs (session stored when the run starts,
 * one session per task step) and the status watch that stops a run when the task is cancelled.
 */
export * from "./config/git-host.config.ts";
export * from "./config/run-timeouts.ts";
export * from "./workspaces/task-workspaces.ts";
export * from "./run/task-status-watch.ts";
export * from "./run/traced-run.ts";
export * from "./run/finished-run.ts";
export * from "./run/step-events.ts";
export * from "./workspaces/task-git.ts";
export * from "./workspaces/workspace-release.ts";
export * from "./workspaces/shared-agent-dir.ts";
export * from "./maintenance/sweep-action.ts";
export * from "./maintenance/step-sweeper.ts";
export * from "./maintenance/pipeline-steps.ts";
export * from "./maintenance/job-end.ts";
export * from "./service/agent-step-wiring.ts";
export * from "./run/step-job.ts";
export * from "./run/watched-run.ts";
export * from "./run/spend-watch.ts";
export * from "./run/step-session.ts";
export * from "./run/failure-cause.ts";
