/** Words only, lower case: "Push of X, rejected!" and "push of x rejected" compare equal. */
function words(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/**
 * `context: cause` for a reason a person reads, saying nothing twice. A job's retry wrapper
 * ("… failed, will retry: ") is dropped from the cause; a cause that already says the context
 * (an error wrapped at two levels) is given alone, and so is a context that already holds the cause.
 */
export function withCause(context: string, cause: string): string {
  const bare = cause.replace(/^.*?,? will retry: /, "").trim();
  if (bare === "") return context;
  const [c, k] = [words(bare), words(context)];
  if (c.includes(k)) return bare;
  if (k.includes(c)) return context;
  return `${context}: ${bare}`;
}
