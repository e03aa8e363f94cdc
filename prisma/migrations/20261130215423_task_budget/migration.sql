-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "budget_usd" DOUBLE PRECISION,
ADD COLUMN     "paused_step" TEXT;
