import type { AnalystProblem } from "@ratatoskr/contracts";
import { jsonCandidates } from "@ratatoskr/opencode";
import { VERDICT_PHASES } from "./analyst-verdict.schema.ts";

/** The last JSON object in the text (the repair answer comes last), or why there is none. */
function lastObject(output: string): Record<string, unknown> | "none" | "malformed" {
  const candidates = jsonCandidates(output);
  for (const candidate of [...candidates].reverse()) {
    try {
      const parsed: unknown = JSON.parse(candidate.source);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
    } catch {
      // an earlier candidate may still parse
    }
  }
  return candidates.length > 0 ? "malformed" : "none";
}

/**
 * What was wrong with an answer that failed validation even after the repair prompt, in the
 * terms the person is told (`task.analyst-error`). Works on the run's whole output.
 */
export function verdictProblem(output: string): AnalystProblem {
  if (output.trim() === "") return "no-verdict";
  const found = lastObject(output);
  if (found === "none" || found === "malformed") return "invalid-json";
  if (found.phase === undefined || found.phase === null || found.phase === "") return "no-phase";
  if (!(VERDICT_PHASES as readonly unknown[]).includes(found.phase)) return "unknown-phase";
  return "invalid-fields";
}
