/**
 * One batch of a pipeline bench: `size` approved tasks at once, each a repository of its own, a dev
 * run that writes one file and a passing review, all answered at once by the scripted model; waits
 * until every task has ended and splits each successful one (see pipeline-timeline.ts).
 */
import { reply } from "../../packages/testkit/src/index.ts";
import { DEV, REVIEWER, type PipelineHarness } from "../../test/pipeline/pipeline-harness.ts";
import { logEntries, printTimeline, taskSplit, type TaskSplit } from "./pipeline-timeline.ts";

export interface BatchResult {
  taskIds: number[];
  splits: TaskSplit[];
  /** Tasks that ended other than in success (their last event is printed). */
  failed: number;
}

/** The dev and reviewer processes' log entries so far. */
export function serviceLogs(h: PipelineHarness) {
  return logEntries(["dev", "reviewer"].map((name) => h.running.get(name)?.output() ?? "").join("\n"));
}

export async function runApprovedBatch(h: PipelineHarness, label: string, size: number, chats: number[], timeoutMs = 300_000): Promise<BatchResult> {
  const tasks = await Promise.all(
    Array.from({ length: size }, async (_, i) => {
      const repo = `bench/${label}t${i}`;
      // Fixed width: no task's title is part of another's ("-1" is part of "-10").
      const title = `Bench task ${label}-${String(i).padStart(3, "0")}`;
      await h.repo(repo);
      h.model.addRule({
        match: { systemIncludes: DEV, promptIncludes: title },
        reply: [reply.write(`${repo}/bench.txt`, `${title}\n`), reply.json({ summary: "done", done: true })],
      });
      h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, findings: [] })] });
      const taskId = await h.approvedTask(chats[i]!, { title, repos: [repo] });
      return { taskId, repo };
    }),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await Promise.all(tasks.map(async (t) => (await h.task(t.taskId)).status));
    if (statuses.every((s) => s === "success" || s === "failed" || s === "cancelled")) break;
    if (Date.now() > deadline) throw new Error(`batch ${label}: ${statuses.join(", ")}\n${h.logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const result: BatchResult = { taskIds: tasks.map((t) => t.taskId), splits: [], failed: 0 };
  const logs = serviceLogs(h);
  for (const t of tasks) {
    const task = await h.task(t.taskId);
    if (task.status === "success") {
      if (process.env["BENCH_TIMELINE"]) await printTimeline(h, t.taskId, logs);
      result.splits.push(await taskSplit(h, t.taskId, t.repo, logs));
    } else {
      // A failed task is counted, not timed: its reason is printed for the person running the bench.
      result.failed++;
      const events = await h.database.db.prisma.taskEvent.findMany({ where: { taskId: t.taskId }, orderBy: { version: "asc" } });
      console.log(`task ${t.taskId} ${task.status}: ${JSON.stringify(events.at(-1)?.payload)}`);
    }
  }
  return result;
}
