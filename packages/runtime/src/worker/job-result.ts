/** An expected no-op (task already advanced, message already delivered): completes, not fails. */
export interface SkippedResult {
  readonly status: "skipped";
  readonly reason: string;
}

export function skipped(reason: string): SkippedResult {
  return { status: "skipped", reason };
}

export function isSkipped(value: unknown): value is SkippedResult {
  return typeof value === "object" && value !== null && (value as { status?: unknown }).status === "skipped";
}
