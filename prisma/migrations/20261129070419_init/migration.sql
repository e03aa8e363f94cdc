-- CreateTable
CREATE TABLE "tasks" (
    "id" SERIAL NOT NULL,
    "source" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "turn_count" INTEGER NOT NULL DEFAULT 0,
    "pending_turns" INTEGER NOT NULL DEFAULT 0,
    "analysing" BOOLEAN NOT NULL DEFAULT false,
    "skip_requested" BOOLEAN NOT NULL DEFAULT false,
    "round" INTEGER NOT NULL DEFAULT 0,
    "max_turns" INTEGER NOT NULL,
    "max_rounds" INTEGER NOT NULL,
    "chat_id" BIGINT,
    "user_id" BIGINT,
    "locale" TEXT,
    "title" TEXT,
    "goal" TEXT,
    "repos" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "why" TEXT,
    "acceptance_criteria" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "branch" TEXT,
    "pr_url" TEXT,
    "agent_session_id" TEXT,
    "agent_server_url" TEXT,
    "failure_reason" TEXT,
    "repo_owner" TEXT,
    "repo_name" TEXT,
    "target_type" TEXT,
    "target_number" INTEGER,
    "target_key" TEXT,
    "command_kind" TEXT,
    "command_message" TEXT,
    "requester_login" TEXT,
    "comment_id" BIGINT,
    "status_comment_id" BIGINT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "finished_at" TIMESTAMP(3),

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "telegram_chats" (
    "chat_id" BIGINT NOT NULL,
    "active_task_id" INTEGER,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "telegram_chats_pkey" PRIMARY KEY ("chat_id")
);

-- CreateTable
CREATE TABLE "dialogue_turns" (
    "id" SERIAL NOT NULL,
    "task_id" INTEGER NOT NULL,
    "role" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "telegram_message_id" BIGINT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "analysed_at" TIMESTAMP(3),

    CONSTRAINT "dialogue_turns_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_traces" (
    "id" SERIAL NOT NULL,
    "task_id" INTEGER NOT NULL,
    "agent" TEXT NOT NULL,
    "round" INTEGER,
    "prompt" TEXT NOT NULL,
    "output" TEXT,
    "outcome" TEXT NOT NULL,
    "session_id" TEXT,
    "server_url" TEXT,
    "model" TEXT,
    "tokens_input" INTEGER NOT NULL DEFAULT 0,
    "tokens_output" INTEGER NOT NULL DEFAULT 0,
    "tokens_reasoning" INTEGER NOT NULL DEFAULT 0,
    "tokens_cache_read" INTEGER NOT NULL DEFAULT 0,
    "tokens_cache_write" INTEGER NOT NULL DEFAULT 0,
    "cost" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "error" TEXT,
    "started_at" TIMESTAMP(3) NOT NULL,
    "ended_at" TIMESTAMP(3),

    CONSTRAINT "agent_traces_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_events" (
    "id" SERIAL NOT NULL,
    "task_id" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "from_status" TEXT NOT NULL,
    "to_status" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" SERIAL NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "comment_id" BIGINT,
    "event" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "task_id" INTEGER,
    "received_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "follow_ups" (
    "id" SERIAL NOT NULL,
    "task_id" INTEGER NOT NULL,
    "queue" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMP(3),

    CONSTRAINT "follow_ups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notifications" (
    "id" SERIAL NOT NULL,
    "task_id" INTEGER,
    "channel" TEXT NOT NULL,
    "chat_id" BIGINT,
    "template" TEXT NOT NULL,
    "params" JSONB NOT NULL,
    "reply_markup" JSONB,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "sent_message_ids" BIGINT[] DEFAULT ARRAY[]::BIGINT[],
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_at" TIMESTAMP(3),
    "sent_at" TIMESTAMP(3),

    CONSTRAINT "notifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "gitea_sweep_cursors" (
    "repo_owner" TEXT NOT NULL,
    "repo_name" TEXT NOT NULL,
    "last_comment_id" BIGINT,
    "last_comment_at" TIMESTAMP(3),
    "swept_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "gitea_sweep_cursors_pkey" PRIMARY KEY ("repo_owner","repo_name")
);

-- CreateIndex
CREATE UNIQUE INDEX "tasks_comment_id_key" ON "tasks"("comment_id");

-- CreateIndex
CREATE INDEX "tasks_chat_id_id_idx" ON "tasks"("chat_id", "id");

-- CreateIndex
CREATE INDEX "tasks_target_key_id_idx" ON "tasks"("target_key", "id");

-- CreateIndex
CREATE INDEX "tasks_source_status_idx" ON "tasks"("source", "status");

-- CreateIndex
CREATE UNIQUE INDEX "telegram_chats_active_task_id_key" ON "telegram_chats"("active_task_id");

-- CreateIndex
CREATE INDEX "dialogue_turns_task_id_id_idx" ON "dialogue_turns"("task_id", "id");

-- CreateIndex
CREATE INDEX "agent_traces_task_id_started_at_idx" ON "agent_traces"("task_id", "started_at");

-- CreateIndex
CREATE UNIQUE INDEX "task_events_task_id_version_key" ON "task_events"("task_id", "version");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_delivery_id_key" ON "webhook_deliveries"("delivery_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_comment_id_key" ON "webhook_deliveries"("comment_id");

-- CreateIndex
CREATE UNIQUE INDEX "follow_ups_job_id_key" ON "follow_ups"("job_id");

-- CreateIndex
CREATE INDEX "follow_ups_dispatched_at_created_at_idx" ON "follow_ups"("dispatched_at", "created_at");

-- CreateIndex
CREATE INDEX "notifications_status_created_at_idx" ON "notifications"("status", "created_at");

-- CreateIndex
CREATE INDEX "notifications_task_id_idx" ON "notifications"("task_id");

-- AddForeignKey
ALTER TABLE "telegram_chats" ADD CONSTRAINT "telegram_chats_active_task_id_fkey" FOREIGN KEY ("active_task_id") REFERENCES "tasks"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dialogue_turns" ADD CONSTRAINT "dialogue_turns_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_traces" ADD CONSTRAINT "agent_traces_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "task_events" ADD CONSTRAINT "task_events_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "follow_ups" ADD CONSTRAINT "follow_ups_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE SET NULL ON UPDATE CASCADE;
