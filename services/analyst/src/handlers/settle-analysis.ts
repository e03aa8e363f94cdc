import { IllegalTransitionError, type AnalystProblem, type TaskEvent } from "@ratatoskr/contracts";
import {
  DialogueTurnRepository,
  type ApplyTransitionOptions,
  type AppliedTransition,
} from "@ratatoskr/db";
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

/** Releases an analysis that produced nothing usable; its turns stay pending for the next one. */
export async function releaseFailedAnalysis(
  ctx: TransitionTarget,
  problem: AnalystProblem,
): Promise<boolean> {
  const applied = await applyOrSkip(ctx, { type: "analyst.failed", problem });
  if (applied)
    ctx.logger.warn({ problem }, "analysis failed; the person is told and the task waits for new input");
  return applied;
}
