-- A finished Gitea command's output for its status comment (G5, G7).
ALTER TABLE "tasks" ADD COLUMN "result_text" TEXT;
