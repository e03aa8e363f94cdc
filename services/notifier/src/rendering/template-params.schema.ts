import { TELEGRAM_STATUSES } from "@ratatoskr/contracts";
import { z } from "zod";
import type { TemplateId, TemplateParams } from "../i18n/index.ts";

const taskId = z.number().int().positive();
const text = z.string();
const count = z.number().int().nonnegative();
const status = z.enum(TELEGRAM_STATUSES);
const usd = z.number().nonnegative();
const noParams = z.object({}).transform(() => ({}) as Record<string, never>);

/**
 * What each template needs, checked before rendering: params are stored JSON written by other
 * services (and older deploys), so a missing field becomes a clear failure instead of
 * "undefined" in a chat. Typed against the catalogue: a template added there without a schema
 * here, or with a different shape, does not compile.
 */
export const TEMPLATE_PARAM_SCHEMAS: { readonly [K in TemplateId]: z.ZodType<TemplateParams[K], unknown> } = {
  "bot.greeting": z.object({ taskId }),
  "bot.help": noParams,
  "bot.unknown-command": z.object({ command: text }),
  "bot.task-number-needed": z.object({ command: text, given: text.nullable() }),
  "bot.not-allowed": noParams,
  "bot.text-only": noParams,
  "bot.versions": z.object({ services: z.array(z.object({ name: text, version: text })) }),
  "bot.attach": z.object({ taskId, serverUrl: text, sessionId: text }),
  "bot.attach-none": z.object({ taskId, status }),
  "bot.nothing-to-cancel": noParams,
  "button.approve": noParams,
  "button.edit": noParams,
  "button.cancel": noParams,
  "button.more-budget": noParams,
  "button.stop": noParams,
  "task.not-found": z.object({ taskId }),
  "task.questions": z.object({ taskId, questions: z.array(text).min(1) }),
  "task.draft-ready": z.object({
    taskId,
    title: text,
    goal: text,
    repos: z.array(text),
    why: text,
    acceptanceCriteria: z.array(text),
  }),
  "task.edit-prompt": z.object({ taskId }),
  "task.repo-not-found": z.object({ taskId, missing: z.array(text).min(1) }),
  "task.turn-limit": z.object({ taskId, maxTurns: count }),
  "task.approved": z.object({ taskId }),
  "task.already-approved": z.object({ taskId }),
  "task.cancelled": z.object({ taskId }),
  "task.aborted": z.object({ taskId, reason: text }),
  "task.retry-refused": z.object({ taskId, status }),
  "task.retried": z.object({ taskId }),
  "task.continued": z.object({ taskId }),
  "task.status": z.object({
    taskId,
    status,
    title: text,
    repos: z.array(text),
    round: count,
    maxRounds: count,
    branch: text.nullable().default(null),
    traces: z.array(
      z.object({
        agent: text,
        outcome: text,
        durationMs: count,
        tokens: count,
        costUsd: usd,
      }),
    ),
    live: z
      .object({ stage: text, round: count.nullable(), lastTool: text.nullable(), serverUrl: text, sessionId: text })
      .nullable()
      .default(null),
    totalTokens: count.default(0),
    totalCostUsd: usd.default(0),
    budgetUsd: usd.nullable().default(null),
  }),
  "task.running": z.object({ taskId }),
  "task.dev-to-review": z.object({ taskId, round: count }),
  "task.review-to-dev": z.object({ taskId, round: count, findings: count }),
  "task.success": z.object({
    taskId,
    branch: text,
    commit: text.nullable().default(null),
    prUrl: text.nullable(),
  }),
  "task.failed": z.object({ taskId, reason: text, findings: z.array(text).default([]) }),
  "task.timeout": z.object({ taskId }),
  "task.postmortem": z.object({ taskId, cause: z.enum(["failed", "timeout"]), why: text, whatToDo: text }),
  "task.postmortem-unavailable": z.object({ taskId, reason: text.optional() }),
  "task.budget-exceeded": z.object({ taskId, spentUsd: usd, budgetUsd: usd }),
  "task.budget-extended": z.object({ taskId, budgetUsd: usd }),
  "task.not-paused": z.object({ taskId, status }),
  "task.analyst-error": z.object({
    taskId,
    problem: z.enum([
      "no-verdict",
      "invalid-json",
      "no-phase",
      "unknown-phase",
      "invalid-fields",
      "timeout",
      "unavailable",
      "provider-refused",
      "server-misconfigured",
      "worker-died",
      "internal",
    ]),
    then: z.enum(["retrying", "waiting"]).optional(),
  }),
};
