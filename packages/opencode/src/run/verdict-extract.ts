import type { z } from "zod";

export type VerdictExtraction<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A `{` that opens something JSON-like: `{"…` or `{}` (prose braces such as `{x}` do not count). */
const OPENS_OBJECT = /^\{\s*["}]/;

/**
 * Every JSON object candidate in the text, in order of appearance: the bodies of ``` fences that
 * hold an object (other fences are code, skipped), plus each balanced `{…}` that looks like JSON
 * outside them (string-aware brace matching). A `{` that never closes — prose such as
 * `{"draft` — is skipped, so it cannot swallow a verdict that follows it.
 */
export function jsonCandidates(text: string): Array<{ start: number; source: string }> {
  const out: Array<{ start: number; source: string }> = [];
  const fence = /```[a-zA-Z]*[^\S\n]*\n?([\s\S]*?)```/g;
  const masked = text.split("");
  for (const m of text.matchAll(fence)) {
    const body = (m[1] ?? "").trim();
    if (body.startsWith("{")) out.push({ start: m.index, source: body });
    for (let i = m.index; i < m.index + m[0].length; i++) masked[i] = " ";
  }
  const rest = masked.join("");
  for (let i = rest.indexOf("{"); i !== -1; i = rest.indexOf("{", i + 1)) {
    if (!OPENS_OBJECT.test(rest.slice(i, i + 200))) continue;
    const end = closingBrace(rest, i);
    if (end === -1) continue; // unbalanced: try the next "{"
    out.push({ start: i, source: rest.slice(i, end + 1) });
    i = end;
  }
  return out.sort((x, y) => x.start - y.start);
}

/** Index of the `}` that closes the `{` at `open`, or -1 when the text ends first. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      else if (c === "\n") return -1; // JSON strings never span lines: this "{" opened prose
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

/**
 * Extracts the verdict from the LAST JSON object in the answer — agents think aloud with drafts,
 * and only the final word counts: when that last object is malformed or fails the schema, the
 * result is a problem (→ repair prompt), never an earlier draft that happened to be valid.
 */
export function extractVerdict<T>(text: string, schema: z.ZodType<T>): VerdictExtraction<T> {
  const last = jsonCandidates(text).at(-1);
  if (!last) return { ok: false, problem: "no JSON object found in the answer" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(last.source);
  } catch (err) {
    return { ok: false, problem: `malformed JSON in the last object: ${(err as Error).message}` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { ok: false, problem: "the last JSON value is not an object" };
  const result = schema.safeParse(parsed);
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: describeIssues(result.error.issues) };
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
