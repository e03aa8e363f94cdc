-- One lifecycle for every door: a Gitea command that ended well is `success`, as a Telegram
-- task is, and the pipeline's events carry one name whichever door the task came through.
-- Running tasks go on: the next step of a command reads its findings, plan and dev report
-- under the new names (`review.rejected`, `plan.drafted`, `dev.finished`).
UPDATE "tasks" SET "status" = 'success' WHERE "status" = 'succeeded';
UPDATE "task_events" SET "from_status" = 'success' WHERE "from_status" = 'succeeded';
UPDATE "task_events" SET "to_status" = 'success' WHERE "to_status" = 'succeeded';

UPDATE "task_events" AS e
SET "type" = r.new_type,
    "payload" = jsonb_set(e."payload", '{type}', to_jsonb(r.new_type))
FROM (VALUES
  ('command.dev-finished', 'dev.finished'),
  ('command.plan-drafted', 'plan.drafted'),
  ('command.answer-drafted', 'answer.drafted'),
  ('command.review-passed', 'review.passed'),
  ('command.review-rejected', 'review.rejected'),
  ('command.succeeded', 'run.succeeded'),
  ('command.cancelled', 'user.cancelled')
) AS r(old_type, new_type)
WHERE e."type" = r.old_type;

-- A failure's reason is what the person reads: the old events held a short code, the task row the words.
UPDATE "task_events" AS e
SET "type" = 'run.failed',
    "payload" = jsonb_build_object('type', 'run.failed', 'reason', coalesce(t."failure_reason", 'the command failed'))
FROM "tasks" AS t
WHERE t."id" = e."task_id" AND e."type" IN ('command.failed', 'command.interrupted');
