import { z } from "zod";

/**
 * The reviewer agent's verdict (P3). The reviewer service validates the agent's answer with it;
 * the findings of a rejection travel in the `review.rejected` event (stored in `task_events`),
 * where the dev service reads them back for the next round.
 */
export const REVIEW_SEVERITIES = ["blocking", "major", "minor"] as const;
export type ReviewSeverity = (typeof REVIEW_SEVERITIES)[number];

export const reviewFindingSchema = z.object({
  severity: z.enum(REVIEW_SEVERITIES),
  /** Path relative to the repository (or `owner/name/path` with several repositories); null when general. */
  file: z.string().nullable().optional(),
  line: z.number().int().nonnegative().nullable().optional(),
  text: z.string().min(1),
});
export type ReviewFinding = z.infer<typeof reviewFindingSchema>;

export const reviewVerdictSchema = z.object({
  passed: z.boolean(),
  summary: z.string().optional(),
  findings: z.array(reviewFindingSchema).default([]),
});
export type ReviewVerdict = z.infer<typeof reviewVerdictSchema>;

/** Findings that fail a review; minor ones never do. */
export function isBlockingFinding(finding: ReviewFinding): boolean {
  return finding.severity !== "minor";
}

/** One line per finding, as the person and the next dev round read it: `[major] src/a.ts:12 — text`. */
export function formatFinding(finding: ReviewFinding): string {
  const where = finding.file ? ` ${finding.file}${finding.line ? `:${finding.line}` : ""}` : "";
  return `[${finding.severity}]${where} — ${finding.text.replace(/\s+/g, " ").trim()}`;
}
