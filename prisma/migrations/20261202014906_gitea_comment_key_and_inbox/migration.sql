-- DropIndex
DROP INDEX "tasks_comment_id_key";

-- DropIndex
DROP INDEX "webhook_deliveries_comment_id_key";

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "command_kind" TEXT,
ADD COLUMN     "command_message" TEXT,
ADD COLUMN     "error" TEXT,
ADD COLUMN     "max_rounds" INTEGER,
ADD COLUMN     "repo_name" TEXT,
ADD COLUMN     "repo_owner" TEXT,
ADD COLUMN     "requester_login" TEXT,
ADD COLUMN     "target_number" INTEGER,
ADD COLUMN     "target_type" TEXT;

-- Deliveries recorded before this migration name their comment by id alone: give them the
-- repository of the task they made, so a Redeliver of such a comment is still found.
UPDATE "webhook_deliveries" AS d SET "repo_owner" = t."repo_owner", "repo_name" = t."repo_name"
FROM "tasks" AS t WHERE t."id" = d."task_id";

-- CreateIndex
CREATE UNIQUE INDEX "tasks_repo_owner_repo_name_comment_id_key" ON "tasks"("repo_owner", "repo_name", "comment_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_outcome_id_idx" ON "webhook_deliveries"("outcome", "id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_repo_owner_repo_name_comment_id_key" ON "webhook_deliveries"("repo_owner", "repo_name", "comment_id");
