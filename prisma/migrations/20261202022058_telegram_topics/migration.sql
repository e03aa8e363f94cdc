-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "thread_id" INTEGER;

-- AlterTable
ALTER TABLE "notifications" ADD COLUMN     "thread_id" INTEGER;
