import type { Prisma } from "../generated/client.ts";

/**
 * The Prisma client's model delegates (`prisma.task` …), known before the client is loaded (see
 * lazy-client.ts); test/lazy-client.test.ts checks them against the generated client.
 */
export const PRISMA_MODELS = [
  "task",
  "telegramChat",
  "dialogueTurn",
  "telegramUpdate",
  "agentTrace",
  "taskEvent",
  "webhookDelivery",
  "followUp",
  "notification",
  "giteaSweepCursor",
] as const satisfies readonly Uncapitalize<Prisma.ModelName>[];
