export const REDACTED = "[REDACTED]";

/** Key names whose string values are secrets, wherever they appear (JSON, query strings). */
const SECRET_KEY = String.raw`[A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key|authorization|cookie|credentials?|private[_-]?key)`;

const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // Credentials in URLs: https://user:pass@host, redis://:pass@host, https://TOKEN@host (git).
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"'<>]+@/gi, `$1${REDACTED}@`],
  // Authorization headers with any scheme, including Gitea's `token <value>`.
  [/\b(authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|digest|token)\s+)?[^\s"',;]+/gi, `$1${REDACTED}`],
  [/\b(Bearer|Basic|Digest)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`],
  // Telegram bot tokens, bare or inside api.telegram.org/bot<token>/ URLs.
  [/(?<!\d)\d{6,}:[A-Za-z0-9_-]{30,}/g, REDACTED],
  // "someToken":"value" inside JSON text (a log line, an HTTP response body in an error).
  [new RegExp(String.raw`("${SECRET_KEY}"\s*:\s*)"(?:[^"\\]|\\.)*"`, "gi"), `$1"${REDACTED}"`],
  // The same JSON once more escaped, as a string value inside a JSON log line.
  [new RegExp(String.raw`(\\"${SECRET_KEY}\\"\s*:\s*\\")[^"]*?(?=\\")`, "gi"), `$1${REDACTED}`],
  // ?access_token=… &password=… in query strings and form bodies.
  [new RegExp(String.raw`([?&;]${SECRET_KEY}=)[^&\s"'#]+`, "gi"), `$1${REDACTED}`],
];

/** Matches every line any rule above could change (a superset: false positives only cost time). */
const MAYBE_SECRET =
  /token|passw|secret|api[_-]?key|authori|cookie|credential|private[_-]?key|bearer|basic|digest|\d{6,}:|:\/\/[^\s/@"'<>]+@/i;

/**
 * Removes secrets embedded in free text (error messages, URLs, response bodies). Key-based
 * redaction cannot see these, so every log line and stored failure reason goes through here.
 */
export function scrubSecrets(text: string): string {
  // One cheap pass first: most lines (job ids, counts, plain messages) hold nothing to scrub.
  if (!MAYBE_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}

/** A copy of `err` safe to log or store: message and stack scrubbed, name and cause kept. */
export function scrubError(err: unknown): Error {
  if (!(err instanceof Error)) return new Error(scrubSecrets(String(err)));
  const safe = new Error(
    scrubSecrets(err.message),
    err.cause === undefined ? undefined : { cause: err.cause },
  );
  safe.name = err.name;
  safe.stack = err.stack === undefined ? undefined : scrubSecrets(err.stack);
  return safe;
}
