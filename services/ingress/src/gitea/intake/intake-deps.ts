import type { TaskEvent } from "@ratatoskr/contracts";
import type { AppliedTransition, ApplyTransitionOptions, Database, Repositories } from "@ratatoskr/db";
import { WORK_COMMANDS, type GiteaClient } from "@ratatoskr/gitea";
import type { Logger, QueueSet } from "@ratatoskr/runtime";

/** Stops an agent session's running turn on the opencode server that runs it. */
export type SessionInterrupter = (serverUrl: string, sessionId: string) => Promise<void>;

/** What the intake handlers need; built once by the wiring, replaced piecemeal in tests. */
export interface IntakeDeps {
  repos: Repositories;
  db: Database;
  queues: QueueSet;
  gitea: GiteaClient;
  transition(taskId: number, event: TaskEvent, options?: ApplyTransitionOptions): Promise<AppliedTransition>;
  interrupt: SessionInterrupter;
  maxRunning: number;
  /** What a work command may spend on agent runs (TASK_BUDGET_USD, P5); null: no budget. */
  budgetUsd: number | null;
  logger: Logger;
}

/** Commands that queue and run agents, as opposed to `status`/`cancel` and usage answers. */
export function isWorkCommand(kind: string | null): boolean {
  return kind !== null && (WORK_COMMANDS as readonly string[]).includes(kind);
}
