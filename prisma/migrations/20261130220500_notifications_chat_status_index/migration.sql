-- A chat's pending messages in id order, read by the notifier for every message it sends
-- (without it, a sequential scan of every notification).
CREATE INDEX "notifications_chat_id_status_id_idx" ON "notifications"("chat_id", "status", "id");
