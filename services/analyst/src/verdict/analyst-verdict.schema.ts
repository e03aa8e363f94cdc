import { z } from "zod";

const text = z.string().trim().min(1);

/**
 * Draft fields the analyst may set. Strict, so a misspelt key ("ac", "acceptance_criteria")
 * fails validation and the client's repair prompt names it, instead of being dropped silently.
 */
export const draftFieldsSchema = z.strictObject({
  title: text.optional(),
  goal: text.optional(),
  /** `owner/name`; checked against the git host before the draft may be ready. */
  repos: z.array(text).optional(),
  why: text.optional(),
  acceptanceCriteria: z.array(text).optional(),
});

/** A short message to the person; stored in the dialogue so the next analysis sees it. */
const reply = text.optional();

/**
 * The analyst's strict-JSON verdict (agents/analyst.md describes it to the model).
 * `ask`: questions (the handler keeps the first ANALYST_MAX_QUESTIONS); `propose`: changed
 * fields; `ready`: the draft is complete as is; `abort`: not a coding request.
 */
export const analystVerdictSchema = z.discriminatedUnion("phase", [
  z.object({ phase: z.literal("ask"), questions: z.array(text).min(1), reply }),
  z.object({ phase: z.literal("propose"), draft: draftFieldsSchema, reply }),
  z.object({ phase: z.literal("ready"), reply }),
  z.object({ phase: z.literal("abort"), reason: text }),
]);

export type AnalystVerdict = z.infer<typeof analystVerdictSchema>;
export type DraftFields = z.infer<typeof draftFieldsSchema>;
export const VERDICT_PHASES = ["ask", "propose", "ready", "abort"] as const;
