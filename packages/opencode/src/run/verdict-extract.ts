import type { z } from "zod";

export type VerdictExtraction<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Every JSON object candidate in the text, in order of appearance: the bodies of ``` fences
 * first-class, plus each balanced top-level `{…}` outside them (string-aware brace matching).
 */
export function jsonCandidates(text: string): Array<{ start: number; source: string }> {
  const out: Array<{ start: number; source: string }> = [];
  const fence = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/g;
  const masked = text.split("");
  for (const m of text.matchAll(fence)) {
    out.push({ start: m.index, source: (m[1] ?? "").trim() });
    for (let i = m.index; i < m.index + m[0].length; i++) masked[i] = " ";
  }
  const rest = masked.join("");
  let depth = 0;
  let begin = -1;
  let inString = false;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"' && depth > 0) inString = true;
    else if (c === "{") {
      if (depth === 0) begin = i;
      depth++;
    } else if (c === "}" && depth > 0) {
      depth--;
      if (depth === 0) out.push({ start: begin, source: rest.slice(begin, i + 1) });
    }
  }
  return out.sort((x, y) => x.start - y.start);
}

/**
 * Extracts the verdict: the LAST candidate that parses as a JSON object and satisfies the schema
 * wins (agents often think aloud with draft objects before the final answer). When none passes,
 * the problem names the last object's schema errors, or says that no JSON object was found.
 */
export function extractVerdict<T>(text: string, schema: z.ZodType<T>): VerdictExtraction<T> {
  const candidates = jsonCandidates(text);
  let lastProblem: string | undefined;
  for (const candidate of [...candidates].reverse()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate.source);
    } catch (err) {
      lastProblem ??= `malformed JSON: ${(err as Error).message}`;
      continue;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      lastProblem ??= "the JSON value is not an object";
      continue;
    }
    const result = schema.safeParse(parsed);
    if (result.success) return { ok: true, value: result.data };
    if (lastProblem === undefined || lastProblem.startsWith("malformed")) lastProblem = describeIssues(result.error.issues);
  }
  return { ok: false, problem: lastProblem ?? "no JSON object found in the answer" };
}

function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return (
    "schema mismatch: " +
    issues
      .slice(0, 8)
      .map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`)
      .join("; ")
  );
}

/** The follow-up prompt sent once in the same session when the verdict did not validate. */
export function repairPrompt(problem: string): string {
  return (
    `Your previous answer could not be used: ${problem}.\n` +
    "Reply again with ONLY the corrected JSON object (no prose, no code fence), with every required field and the right types."
  );
}
