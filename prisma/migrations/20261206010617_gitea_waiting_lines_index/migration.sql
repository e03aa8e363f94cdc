-- DropIndex
DROP INDEX "tasks_source_status_idx";

-- CreateIndex
CREATE INDEX "tasks_source_status_target_key_id_idx" ON "tasks"("source", "status", "target_key", "id");
