import { z } from "zod";

/** Database id of a task (the `N` people type in `/status N`). */
const taskId = () => z.number().int().positive();

/*
 * Job payloads carry ids, never state: the consumer reloads the task from Postgres.
 * Every payload has an explicit contract version `v`; bump it (and keep parsing the old one
 * until queues drain) when a field changes meaning.
 *
 * Each function builds its queue's schema; JOB_CATALOG builds each once, when a job of that queue
 * is first checked: an idle process checks none, and built at import they took ~0.3 MB of heap.
 */

export const intakeJobSchema = () =>
  z.discriminatedUnion("kind", [
    /** Authorize and route one stored Gitea command. */
    z.object({ v: z.literal(1), kind: z.literal("route-command"), taskId: taskId() }),
    /**
     * Start the next queued command of one issue/PR, if none is running. `joined`: the command
     * that joined the line and asked for it (only its place and those behind it can have moved);
     * absent (jobs from before it, a command leaving): every waiting command's place is shown.
     */
    z.object({ v: z.literal(1), kind: z.literal("dispatch-next"), targetKey: z.string().min(1), joined: taskId().optional() }),
    /** A command's agents are done: open its PR or post its plan/answer, then settle it (G3). */
    z.object({ v: z.literal(1), kind: z.literal("publish"), taskId: taskId() }),
    /**
     * Make the stored Gitea commands into tasks: asked by a replica that answers webhooks but
     * takes no intake jobs (`INGRESS_CONCURRENCY=0`). `upTo`: the newest stored row it knew of
     * (it names the job); the drain takes every pending row, newer ones too.
     */
    z.object({ v: z.literal(1), kind: z.literal("drain-commands"), upTo: z.number().int().positive() }),
  ]);

export const analystJobSchema = () =>
  z.object({
    v: z.literal(1),
    taskId: taskId(),
    /** `turn`: analyse pending dialogue turns; `force-draft`: /skip; `plan`/`discuss`: Gitea. */
    kind: z.enum(["turn", "force-draft", "plan", "discuss"]),
  });

export const devJobSchema = () =>
  z.object({
    v: z.literal(1),
    taskId: taskId(),
    kind: z.enum(["implement", "revise", "fix", "continue"]),
    /** Review round this run belongs to, starting at 1. */
    round: z.number().int().positive(),
  });

export const reviewJobSchema = () =>
  z.object({
    v: z.literal(1),
    taskId: taskId(),
    kind: z.enum(["diff", "plan"]),
    round: z.number().int().positive(),
  });

export const postmortemJobSchema = () =>
  z.object({
    v: z.literal(1),
    taskId: taskId(),
    cause: z.enum(["failed", "timeout"]),
  });

/** Most messages one v2 notify job carries (its chats are leased, claimed and sent together). */
export const NOTIFY_MESSAGES_PER_JOB = 32;

/** One stored message (table `notifications`) and its Telegram chat. */
const notifyTarget = () =>
  z.object({
    notificationId: z.number().int().positive(),
    chatId: z.number().int(),
  });

export const notifyJobSchema = () =>
  z.discriminatedUnion("kind", [
    /** v1: deliver one stored outgoing message. */
    z.object({
      v: z.literal(1),
      kind: z.literal("message"),
      notificationId: z.number().int().positive(),
      /**
       * The message's Telegram chat, so the notifier can take the chat first and read + claim in
       * one statement. Optional: jobs queued before it existed (or by producers that leave it out)
       * are looked up.
       */
      chatId: z.number().int().optional(),
    }),
    /**
     * v2: deliver stored messages of one or more Telegram chats in one job — one lease call and
     * one claim statement for all its chats, each chat still sent in order. What a producer with
     * several messages at once queues (the outbox dispatcher, the notifier's own sweeps).
     */
    z.object({
      v: z.literal(2),
      kind: z.literal("messages"),
      messages: z.array(notifyTarget()).min(1).max(NOTIFY_MESSAGES_PER_JOB),
    }),
    /** Bring a Gitea command's status comment in line with the task's current state. */
    z.object({ v: z.literal(1), kind: z.literal("gitea-status"), taskId: taskId() }),
  ]);

export type NotifyTarget = z.infer<ReturnType<typeof notifyTarget>>;

export type IntakeJob = z.infer<ReturnType<typeof intakeJobSchema>>;
export type AnalystJob = z.infer<ReturnType<typeof analystJobSchema>>;
export type DevJob = z.infer<ReturnType<typeof devJobSchema>>;
export type ReviewJob = z.infer<ReturnType<typeof reviewJobSchema>>;
export type PostmortemJob = z.infer<ReturnType<typeof postmortemJobSchema>>;
export type NotifyJob = z.infer<ReturnType<typeof notifyJobSchema>>;
