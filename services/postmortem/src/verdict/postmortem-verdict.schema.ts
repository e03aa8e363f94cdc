import { z } from "zod";

/** What the postmortem agent answers (agents/postmortem.md). */
export const postmortemVerdictSchema = z.object({
  cause: z.string().trim().min(1).max(4_000),
  progress: z.string().trim().max(4_000).optional().default(""),
  nextSteps: z.array(z.string().trim().min(1).max(1_000)).max(10).optional().default([]),
});

export type PostmortemVerdict = z.infer<typeof postmortemVerdictSchema>;

/** The two parts of the person's message: "why it happened" and "what to do". */
export function noticeOf(verdict: PostmortemVerdict): { why: string; whatToDo: string } {
  const why = verdict.progress ? `${verdict.cause}\n${verdict.progress}` : verdict.cause;
  const steps = verdict.nextSteps;
  const whatToDo = steps.length === 0 ? "—" : steps.length === 1 ? (steps[0] ?? "—") : steps.map((s) => `• ${s}`).join("\n");
  return { why, whatToDo };
}
