import { IllegalTransitionError, type AnalystProblem, type TaskEvent } from "@ratatoskr/contracts";
import {
  DialogueTurnRepository,
  type ApplyTransitionOptions,
  type AppliedTransition,
  type TaskEventRepository,
} from "@ratatoskr/db";
import type { JobEnd } from "@ratatoskr/pipeline";
import type { Logger } from "@ratatoskr/runtime";
import type { AnalysisOutcome } from "../outcome/analysis-outcome.ts";
import {
  missingRepositoriesQuestion,
  whichRepositoryQuestion,
  type DialogueLanguage,
} from "../outcome/fallback-questions.ts";

export type TransitionFn = (
  taskId: number,
  event: TaskEvent,
  options?: ApplyTransitionOptions,
) => Promise<AppliedTransition>;

export interface SettleContext {
  transition: TransitionFn;
  logger: Logger;
  taskId: number;
  /** Ids of the pending turns this analysis was given. */
  fedTurnIds: readonly number[];
  forced: boolean;
  language: DialogueLanguage;
}

/** How an outcome is reported: the event, the draft columns, what the analyst "said", extra writes. */
interface Report {
  event: TaskEvent;
  patch?: ApplyTransitionOptions["patch"];
  /** Stored as the analyst's dialogue turn, so the next analysis knows what the person was told. */
  said: string;
}

function lines(...parts: Array<string | undefined>): string {
  return parts.filter((part): part is string => Boolean(part && part.trim())).join("\n");
}

function reportOf(outcome: AnalysisOutcome, ctx: SettleContext): Report {
  const analysis = { consumedTurns: ctx.fedTurnIds.length, forced: ctx.forced };
  switch (outcome.kind) {
    case "ask":
      return {
        event: { type: "analyst.asked", questions: outcome.questions, ...analysis },
        said: lines(outcome.reply, ...outcome.questions),
      };
    case "needs-repository": {
      const question = whichRepositoryQuestion(ctx.language);
      return {
        event: { type: "analyst.asked", questions: [question], ...analysis },
        patch: outcome.patch,
        said: lines(outcome.reply, question),
      };
    }
    case "repos-missing":
      return {
        event: { type: "analyst.repos-missing", missing: [...outcome.missing], ...analysis },
        patch: outcome.patch,
        said: missingRepositoriesQuestion(ctx.language, outcome.missing),
      };
    case "drafted":
      return {
        event: { type: "analyst.drafted", ...analysis },
        patch: outcome.patch,
        said:
          outcome.reply ??
          (outcome.changed.length > 0
            ? `Draft updated: ${outcome.changed.join(", ")}.`
            : "The draft is complete."),
      };
    case "abort":
      return { event: { type: "analyst.aborted", reason: outcome.reason }, said: outcome.reason };
  }
}

type TransitionTarget = Pick<SettleContext, "transition" | "logger" | "taskId">;

/** An illegal transition here means the task moved on meanwhile (cancelled): nothing to report. */
async function applyOrSkip(
  ctx: TransitionTarget,
  event: TaskEvent,
  options?: ApplyTransitionOptions,
): Promise<boolean> {
  try {
    await ctx.transition(ctx.taskId, event, options);
    return true;
  } catch (err) {
    if (!(err instanceof IllegalTransitionError)) throw err;
    ctx.logger.info({ refusal: err.refusal }, "task moved on during the analysis; its result is dropped");
    return false;
  }
}

/**
 * Reports a finished analysis in one transaction: the state change, the draft, the consumed
 * turns marked analysed and the analyst's answer stored in the dialogue. If turns arrived
 * meanwhile the reducer starts the next analysis instead of messaging the person; the answer is
 * then not stored, because the person never saw it.
 */
export async function settleAnalysis(ctx: SettleContext, outcome: AnalysisOutcome): Promise<boolean> {
  const report = reportOf(outcome, ctx);
  const applied = await applyOrSkip(ctx, report.event, {
    ...(report.patch && Object.keys(report.patch).length > 0 ? { patch: report.patch } : {}),
    alongside: async (tx) => {
      const turns = new DialogueTurnRepository(tx);
      await turns.markAnalysed(ctx.fedTurnIds);
      const { analysing } = await tx.task.findUniqueOrThrow({
        where: { id: ctx.taskId },
        select: { analysing: true },
      });
      if (analysing) return;
      await turns.add({ taskId: ctx.taskId, role: "assistant", text: report.said });
    },
  });
  if (applied) ctx.logger.info({ event: report.event.type, outcome: outcome.kind }, "analysis reported");
  return applied;
}

export interface ReleaseTarget extends TransitionTarget {
  events: Pick<TaskEventRepository, "list">;
}

/** Events after which a failing analysis counts from one again: an answer, or the person's word. */
const STREAK_BREAKERS = new Set(["analyst.asked", "analyst.drafted", "analyst.repos-missing", "turn.received", "user.skipped", "user.retried"]);

/** How many analyses will have failed in a row once this one is reported. */
export function failedInARow(events: ReadonlyArray<{ type: string }>): number {
  let failed = 1;
  for (let i = events.length - 1; i >= 0 && !STREAK_BREAKERS.has(events[i]!.type); i--) {
    if (events[i]!.type === "analyst.failed") failed++;
  }
  return failed;
}

/**
 * Releases an analysis that produced nothing usable, telling the person `problem`. A problem of
 * the machinery (not of the answer) analyses the pending turns again at once, a few times in a
 * row (the reducer decides); otherwise they stay pending for the person's next message. A sweep
 * passes the version it judged the task at, so an analysis reported meanwhile is not undone.
 */
export async function releaseFailedAnalysis(
  ctx: ReleaseTarget,
  problem: AnalystProblem,
  options: Pick<ApplyTransitionOptions, "expectVersion"> = {},
): Promise<boolean> {
  const inARow = failedInARow(await ctx.events.list(ctx.taskId));
  const applied = await applyOrSkip(ctx, { type: "analyst.failed", problem, failedInARow: inARow }, options);
  if (applied) ctx.logger.warn({ problem, failedInARow: inARow }, "analysis failed; the person is told why");
  return applied;
}

/** The problem of an analysis whose job ended outside its handler, from how the job ended. */
export function lostAnalysisProblem(end: JobEnd): AnalystProblem {
  return end.kind === "worker-died" ? "worker-died" : "internal";
}
