import { ConfigError, type ConfigProblem } from "./config-loader.ts";

/**
 * Start-up cannot go on for a reason a person fixes outside the code (Redis unreachable, database
 * not migrated): the entry prints the message as one line, without a stack trace, and exits 1.
 */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/**
 * Runs every config check (each may throw ConfigError) and returns all their problems, each
 * variable's message once, so cross-variable rules are reported with the schema's in one list.
 */
export function collectConfigProblems(checks: ReadonlyArray<() => unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const check of checks) {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  return uniqueProblems(problems);
}

/** The same variable with the same message (read by several services) is one problem. */
export function uniqueProblems(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.name}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
