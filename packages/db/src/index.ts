export * from "./database.ts";
export { applyMigrations, type ApplyMigrationsOptions } from "./migrations/apply-migrations.ts";
export {
  MigrationChecksumError,
  MigrationFailedError,
  UnfinishedMigrationError,
} from "./migrations/migration-errors.ts";
export * from "./migrations/migration-status.ts";
export { MIGRATIONS_DIR, PRISMA_SCHEMA_PATH } from "./paths.ts";
export * from "./repositories/task.repository.ts";
export * from "./repositories/task-snapshot.mapper.ts";
export * from "./repositories/dialogue-turn.repository.ts";
export * from "./repositories/agent-trace.repository.ts";
export * from "./repositories/task-event.repository.ts";
export * from "./repositories/notification.repository.ts";
export * from "./repositories/gitea-sweep-cursor.repository.ts";
export * from "./repositories/telegram-update.repository.ts";
export * from "./repositories/repositories.ts";
export * from "./transitions/apply-transition.ts";
export * from "./budget/budget-guard.ts";
export { notifyJobId } from "./transitions/notify-job-id.ts";
export { channelOf, deliveryJobData, type TaskChannel } from "./transitions/task-channel.ts";
export * from "./follow-ups/follow-up.dispatcher.ts";
export { toJobRequest } from "./follow-ups/follow-up-job.ts";
export {
  listAwaitingAnalysis,
  listAwaitingAuthorization,
  listAwaitingDevOrReview,
  listAwaitingPostmortem,
  type AwaitedFollowUp,
} from "./follow-ups/follow-up-sql.ts";
export { createGroupCommit, type GroupCommitOptions } from "./sql/group-commit.ts";
export { pgDriver } from "./sql/pg-driver.ts";
export { isConflictSqlError, isPoisonSqlError } from "./sql/poison-sql.ts";
