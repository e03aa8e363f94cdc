/**
 * Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?message}` against an environment (the
 * values an operator's .env would give). A required variable that is missing is an error, as in
 * `docker compose config`.
 */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}/g,
    (_m, name: string, op?: string, arg?: string) => {
      const set = env[name];
      if (set !== undefined && set !== "") return set;
      if (op === ":?") throw new Error(`${name}: ${arg}`);
      return op === ":-" ? (arg ?? "") : "";
    },
  );
}

/** Every `${VAR...}` reference in a text, by name, with whether it is required (`:?`). */
export function references(text: string): Map<string, { required: boolean }> {
  const found = new Map<string, { required: boolean }>();
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-|:\?)?/g)) {
    const required = m[2] === ":?" || found.get(m[1]!)?.required === true;
    found.set(m[1]!, { required });
  }
  return found;
}
