import { type EnvVar, isEnvVar } from "./env-var.ts";

/** A config schema is a tree whose leaves are env vars; the loaded config has the same shape. */
export interface ConfigSchema {
  readonly [key: string]: EnvVar<unknown> | ConfigSchema;
}

export type ConfigOf<S extends ConfigSchema> = {
  readonly [K in keyof S]: S[K] extends EnvVar<infer T>
    ? T
    : S[K] extends ConfigSchema
      ? ConfigOf<S[K]>
      : never;
};

export type Env = Readonly<Record<string, string | undefined>>;

export interface ConfigProblem {
  readonly name: string;
  /** Safe to print: never contains a secret's value. */
  readonly message: string;
}

/** Names every missing or invalid variable at once, so one restart fixes them all. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.name} ${p.message}`);
    super(
      `Invalid configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${lines.join("\n")}`,
    );
  }
}

/** Longest raw value echoed back for a non-secret variable. */
const MAX_ECHO_CHARS = 60;

function echo(envVar: EnvVar<unknown>, raw: string): string {
  if (envVar.secret) return " (value hidden: secret)";
  const shown = raw.length > MAX_ECHO_CHARS ? `${raw.slice(0, MAX_ECHO_CHARS)}…` : raw;
  return ` (got ${JSON.stringify(shown)})`;
}

function readVar(envVar: EnvVar<unknown>, env: Env, problems: ConfigProblem[]): unknown {
  // An empty value counts as unset: `FOO=` in an env file means "not configured".
  const given = env[envVar.name]?.trim() || undefined;
  const raw = given ?? envVar.defaultValue;
  if (raw === undefined) {
    if (envVar.required)
      problems.push({ name: envVar.name, message: `is required but not set: ${envVar.description}` });
    return undefined;
  }
  const result = envVar.parse(raw);
  if (result.ok) return result.value;
  problems.push({ name: envVar.name, message: `${result.message}${echo(envVar, raw)}` });
  return undefined;
}

function readTree(schema: ConfigSchema, env: Env, problems: ConfigProblem[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(schema)) {
    out[key] = isEnvVar(node) ? readVar(node, env, problems) : readTree(node, env, problems);
  }
  return Object.freeze(out);
}

/**
 * Reads `schema` from `env`. Returns a nested, deeply frozen config; throws ConfigError naming
 * every missing or invalid variable (secret values are never echoed).
 */
export function loadConfig<S extends ConfigSchema>(schema: S, env: Env = process.env): ConfigOf<S> {
  const problems: ConfigProblem[] = [];
  const config = readTree(schema, env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return config as ConfigOf<S>;
}

export interface ConfigVariable {
  readonly name: string;
  /** Where the value lands in the loaded config, e.g. "redis.url". */
  readonly path: string;
  readonly description: string;
  readonly format: string;
  readonly defaultValue: string | undefined;
  readonly required: boolean;
  readonly secret: boolean;
}

/** Every variable a schema reads, in schema order (for the README config table). */
export function describeConfig(schema: ConfigSchema, prefix = ""): ConfigVariable[] {
  return Object.entries(schema).flatMap(([key, node]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!isEnvVar(node)) return describeConfig(node, path);
    const { name, description, format, defaultValue, required, secret } = node;
    return [{ name, path, description, format, defaultValue, required, secret }];
  });
}

/**
 * Services that share a variable (e.g. the bot token, read by ingress and notifier) declare it
 * each; it is documented once, and declarations that disagree on its default are a bug.
 */
function uniqueVariables(variables: ConfigVariable[]): ConfigVariable[] {
  const byName = new Map<string, ConfigVariable>();
  for (const v of variables) {
    const seen = byName.get(v.name);
    if (!seen) byName.set(v.name, v);
    else if (seen.defaultValue !== v.defaultValue || seen.secret !== v.secret) {
      throw new Error(
        `${v.name} is declared twice with different defaults or secrecy (${seen.path}, ${v.path})`,
      );
    }
  }
  return [...byName.values()];
}

/** Markdown table of a schema's variables; README tables are generated or checked against it. */
export function renderConfigTable(schema: ConfigSchema): string {
  const rows = uniqueVariables(describeConfig(schema)).map((v) => {
    const fallback =
      v.defaultValue !== undefined ? `\`${v.defaultValue}\`` : v.required ? "required" : "optional";
    const meaning = `${v.description} (${v.format}${v.secret ? "; secret" : ""})`.replaceAll("|", "\\|");
    return `| \`${v.name}\` | ${fallback} | ${meaning} |`;
  });
  return ["| Variable | Default | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
