-- AlterTable
ALTER TABLE "agent_traces" ADD COLUMN     "job_id" TEXT;
