-- AlterTable
ALTER TABLE "dialogue_turns" ADD COLUMN     "message_key" TEXT;

-- CreateTable
CREATE TABLE "telegram_updates" (
    "update_id" BIGINT NOT NULL,
    "chat_id" BIGINT,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "locked_until" TIMESTAMP(3),
    "received_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "handled_at" TIMESTAMP(3),

    CONSTRAINT "telegram_updates_pkey" PRIMARY KEY ("update_id")
);

-- CreateIndex
CREATE INDEX "telegram_updates_status_chat_id_update_id_idx" ON "telegram_updates"("status", "chat_id", "update_id");

-- CreateIndex
CREATE UNIQUE INDEX "dialogue_turns_message_key_key" ON "dialogue_turns"("message_key");
