import { QUEUE, type QueueName } from "@ratatoskr/contracts";
import type { AgentTrace } from "@ratatoskr/db";
import { readAgentJobProgress, type QueueSet } from "@ratatoskr/runtime";

/** The agents whose jobs publish their live progress (O6), and the queue each runs on. */
const PROGRESS_QUEUES: Readonly<Record<string, QueueName>> = { dev: QUEUE.dev, reviewer: QUEUE.review };

/** An agent run in progress, as `/status N` and the Gitea status comment show it (O6). */
export interface LiveRun {
  /** The agent at work (`dev`, `reviewer`): the stage the Gitea status comment names too. */
  stage: string;
  /** The round its run belongs to. */
  round: number | null;
  /** The newest tool call of the run, null before its first. */
  lastTool: string | null;
  /** What the run has used so far: its trace holds it only once the run ends. */
  tokens: number;
  costUsd: number;
  /** Where to watch it: `opencode attach <serverUrl> --session <sessionId>`. */
  serverUrl: string;
  sessionId: string;
}

/**
 * The run in progress of a task, given its newest trace: a dev or review run that has not ended,
 * as its job last reported it. Undefined between runs, for agents that publish no progress, or
 * when the job's progress is of another session (a retry that has not opened its own yet).
 */
export async function readLiveRun(queues: QueueSet["queues"], newest: AgentTrace | null | undefined): Promise<LiveRun | undefined> {
  const queue = newest ? PROGRESS_QUEUES[newest.agent] : undefined;
  if (!newest || !queue || newest.endedAt !== null || !newest.jobId || !newest.sessionId || !newest.serverUrl) return undefined;
  const progress = await readAgentJobProgress(queues[queue], newest.jobId);
  if (progress?.sessionId !== newest.sessionId) return undefined;
  const { lastTool, tokens, costUsd } = progress;
  return { stage: newest.agent, round: newest.round, lastTool, tokens, costUsd, serverUrl: newest.serverUrl, sessionId: newest.sessionId };
}
