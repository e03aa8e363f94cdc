-- AlterTable
ALTER TABLE "notifications" ADD COLUMN     "uncertain_at" TIMESTAMP(3);
