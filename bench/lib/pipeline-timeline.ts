/**
 * Where one task's time went in a pipeline bench, read from what the pipeline already records:
 * its events (Postgres), its agent runs (traces), the scripted model's requests and the dev and
 * reviewer processes' logs (at debug: `git command` with its ms, `agent run prompting` with the
 * run's slot, warm-up and session waits, `job started` per job).
 */
import type { PipelineHarness } from "../../test/pipeline/pipeline-harness.ts";
import { DEV } from "../../test/pipeline/pipeline-harness.ts";

export interface TaskSplit {
  /** Approval → review passed. */
  wall: number;
  /** The scripted model's replies. */
  model: number;
  /** Agent runs (trace start → end) minus the model: opencode working on the turns. */
  runs: number;
  /** Before a run's trace: the directory's warm-up and the session's creation in opencode. */
  opening: number;
  /** Waiting for a free prompt slot on an opencode server (the per-server cap). */
  waiting: number;
  /** Every git command the dev and reviewer ran for the task's repository. */
  git: number;
  /** The rest: queue hops, transactions, notifications, bookkeeping. */
  ours: number;
  /** Each stage hop: a step's result committed (its event) → the next step's job started, ms. */
  hops: number[];
  /** Each hop in three: event → job added, added → BullMQ's moveToActive, moveToActive → handler (the worker's log). */
  hopParts: Array<{ added: number; taken: number; started: number }>;
}

interface LogEntry {
  time: number;
  msg: string;
  [field: string]: unknown;
}

/** The JSON log lines of the services' output (other lines skipped). */
export function logEntries(output: string): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line) as { time: string; msg: string };
      entries.push({ ...entry, time: Date.parse(entry.time) });
    } catch {
      // a partial line at the end of the output
    }
  }
  return entries;
}

const sum = (values: number[]) => values.reduce((total, v) => total + v, 0);

/** The task's split, from its events, traces and the services' log entries. */
export async function taskSplit(h: PipelineHarness, taskId: number, repo: string, logs: LogEntry[]): Promise<TaskSplit> {
  const prisma = h.database.db.prisma;
  const events = await prisma.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });
  const approved = events.find((e) => e.type === "user.approved")!.createdAt.getTime();
  const passed = events.find((e) => e.type === "review.passed")!.createdAt.getTime();
  const traces = await h.traces(taskId);
  const sessions = new Set(traces.map((t) => t.sessionId));
  const model = sum(h.model.requests.filter((r) => sessions.has(r.sessionId ?? null)).map((r) => (r.endedAt ?? r.receivedAt) - r.receivedAt));
  const runs = sum(traces.map((t) => (t.endedAt?.getTime() ?? t.startedAt.getTime()) - t.startedAt.getTime()));
  const git = sum(logs.filter((e) => e.msg === "git command" && e["repo"] === repo).map((e) => Number(e["ms"] ?? 0)));
  const prompting = logs.filter((e) => e.msg === "agent run prompting" && sessions.has(e["sessionId"] as string));
  const field = (name: string) => sum(prompting.map((e) => Number(e[name] ?? 0)));
  const waiting = field("slotMs");
  const opening = field("warmupMs") + field("sessionMs") + field("eventsMs");
  // A job id is `<task>-<step>-<version of the event that queued it>`.
  const committed = new Map(events.map((e) => [e.version, e.createdAt.getTime()]));
  const hops: number[] = [];
  const hopParts: TaskSplit["hopParts"] = [];
  const seen = new Set<string>();
  for (const e of logs) {
    const jobId = e["jobId"];
    if (e.msg !== "job started" || typeof jobId !== "string" || seen.has(jobId)) continue;
    seen.add(jobId); // a retried job's later starts are no hop
    const m = /^(\d+)-(?:dev|review)-(\d+)$/.exec(jobId);
    const at = m && Number(m[1]) === taskId ? committed.get(Number(m[2])) : undefined;
    if (at === undefined) continue;
    const hop = e.time - at;
    const queued = Number(e["queuedMs"]);
    const pickedUp = Number(e["pickedUpMs"]);
    hops.push(hop);
    hopParts.push({ added: hop - queued, taken: queued - pickedUp, started: pickedUp });
  }
  const wall = passed - approved;
  const busy = Math.max(0, runs - model);
  return { wall, model, runs: busy, opening, waiting, git, ours: wall - model - busy - opening - waiting - git, hops, hopParts };
}

/** Every mark of one task, relative to its approval: events, runs, model requests and its log lines. */
export async function printTimeline(h: PipelineHarness, taskId: number, logs: LogEntry[]): Promise<void> {
  const prisma = h.database.db.prisma;
  const events = await prisma.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });
  const approved = events.find((e) => e.type === "user.approved")!.createdAt.getTime();
  const traces = await h.traces(taskId);
  const sessions = new Set(traces.map((t) => t.sessionId));
  const marks: Array<readonly [number, string]> = [
    ...events.map((e) => [e.createdAt.getTime(), `event ${e.type}`] as const),
    ...traces.flatMap((t) => [[t.startedAt.getTime(), `${t.agent} run started`] as const, [t.endedAt?.getTime() ?? NaN, `${t.agent} run ended`] as const]),
    ...h.model.requests.filter((r) => sessions.has(r.sessionId ?? null)).map((r) => [r.receivedAt, `model asked (${r.system.includes(DEV) ? "dev" : "reviewer"})`] as const),
    ...logs
      .filter((e) => e["taskId"] === taskId || String(e["jobId"] ?? "").startsWith(`${taskId}-`) || sessions.has(e["sessionId"] as string))
      .map((e) => {
        const extra = ["op", "ms", "queuedMs", "pickedUpMs", "slotMs", "warmupMs", "sessionMs"].filter((k) => e[k] !== undefined);
        return [e.time, `  log ${String(e["service"] ?? "")} ${e.msg}${extra.map((k) => ` ${k}=${String(e[k])}`).join("")}`] as const;
      }),
  ];
  marks.sort((a, b) => a[0] - b[0]);
  console.log(`task ${taskId}:\n${marks.map(([at, what]) => `  +${at - approved} ms ${what}`).join("\n")}`);
}
