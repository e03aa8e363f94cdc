-- The task version a Gitea command's status comment last showed: the notifier brings up to date a
-- comment whose update Redis lost. The commands before it count as shown as they are.
ALTER TABLE "tasks" ADD COLUMN "status_comment_version" INTEGER;
UPDATE "tasks" SET "status_comment_version" = "version" WHERE "source" = 'gitea';
