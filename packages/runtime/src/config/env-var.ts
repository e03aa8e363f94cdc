import { z } from "zod";

/** Result of reading one raw environment value. */
export type EnvParseResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** One environment variable: how to read it, and how to describe it in the README. */
export interface EnvVar<T> {
  readonly kind: "env-var";
  readonly name: string;
  /** What the variable means, one sentence (rendered in the README config table). */
  readonly description: string;
  /** Secret values (tokens, passwords, URLs with credentials) are never echoed anywhere. */
  readonly secret: boolean;
  /** The default as it would be written in the environment, if any. */
  readonly defaultValue: string | undefined;
  /** True when unset is an error (no default and not optional). */
  readonly required: boolean;
  /** Accepted values in words, e.g. "integer 0..65535". */
  readonly format: string;
  /** Parses a present, non-empty raw value. */
  readonly parse: (raw: string) => EnvParseResult<T>;
}

export interface EnvVarOptions<TDefault> {
  description: string;
  secret?: boolean;
  default?: TDefault;
  /** Unset yields `undefined` instead of an error. */
  optional?: boolean;
}

/** `EnvVar<T | undefined>` when the options say `optional: true`, else `EnvVar<T>`. */
export type EnvVarFor<T, O> = O extends { optional: true } ? EnvVar<T | undefined> : EnvVar<T>;

function defineEnvVar<T>(
  name: string,
  format: string,
  schema: z.ZodType<T>,
  opts: EnvVarOptions<unknown>,
  formatDefault: (value: never) => string = String,
): EnvVar<T> {
  if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`env var name must be SCREAMING_SNAKE, got "${name}"`);
  const defaultValue = opts.default === undefined ? undefined : formatDefault(opts.default as never);
  return Object.freeze({
    kind: "env-var",
    name,
    description: opts.description,
    secret: opts.secret ?? false,
    defaultValue,
    required: defaultValue === undefined && opts.optional !== true,
    format,
    parse(raw: string): EnvParseResult<T> {
      const result = schema.safeParse(raw);
      if (result.success) return { ok: true, value: result.data };
      return { ok: false, message: result.error.issues[0]?.message ?? `must be ${format}` };
    },
  });
}

export function isEnvVar(value: unknown): value is EnvVar<unknown> {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "env-var";
}

export function envString<const O extends EnvVarOptions<string> & { pattern?: RegExp }>(
  name: string,
  opts: O,
): EnvVarFor<string, O> {
  const format = opts.pattern ? `text matching ${opts.pattern}` : "non-empty text";
  const schema = opts.pattern ? z.string().regex(opts.pattern, `must be ${format}`) : z.string();
  return defineEnvVar(name, format, schema, opts) as EnvVarFor<string, O>;
}

export function envUrl<const O extends EnvVarOptions<string> & { protocols: readonly string[] }>(
  name: string,
  opts: O,
): EnvVarFor<string, O> {
  const protocols = opts.protocols.map((p) => `${p}:`);
  const format = `a URL (${opts.protocols.map((p) => `${p}://`).join(" or ")})`;
  const schema = z.string().refine((raw) => {
    if (!URL.canParse(raw)) return false;
    return protocols.includes(new URL(raw).protocol);
  }, `must be ${format}`);
  return defineEnvVar(name, format, schema, opts) as EnvVarFor<string, O>;
}

/** Integers may be written with `_` separators ("30_000"), like in code. */
export function envInt<const O extends EnvVarOptions<number> & { min?: number; max?: number }>(
  name: string,
  opts: O,
): EnvVarFor<number, O> {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const format =
    opts.min !== undefined && opts.max !== undefined
      ? `an integer ${min}..${max}`
      : opts.min !== undefined
        ? `an integer >= ${min}`
        : "an integer";
  const message = `must be ${format}`;
  const schema = z
    .string()
    .regex(/^-?\d+(_\d+)*$/, message)
    .transform((raw) => Number(raw.replaceAll("_", "")))
    .pipe(z.number().int().min(min, message).max(max, message));
  return defineEnvVar(name, format, schema, opts) as EnvVarFor<number, O>;
}

/** An amount of US dollars, e.g. "2.50"; the name must say so (`…_USD`). Never negative. */
export function envUsd<const O extends EnvVarOptions<number>>(name: string, opts: O): EnvVarFor<number, O> {
  if (!name.endsWith("_USD")) throw new Error(`dollar env var must end with _USD, got "${name}"`);
  const format = "US dollars >= 0, e.g. 2.50";
  const schema = z
    .string()
    .regex(/^\d+(\.\d+)?$/, `must be ${format}`)
    .transform(Number)
    .pipe(z.number().finite(`must be ${format}`));
  return defineEnvVar(name, format, schema, opts) as EnvVarFor<number, O>;
}

/** A duration in milliseconds; the name must say so (`…_MS`). */
export function envDurationMs<const O extends EnvVarOptions<number>>(
  name: string,
  opts: O,
): EnvVarFor<number, O> {
  if (!name.endsWith("_MS")) throw new Error(`duration env var must end with _MS, got "${name}"`);
  return envInt(name, { ...opts, min: 0 }) as EnvVarFor<number, O>;
}

/** Only "true"/"false"/"1"/"0": "yes" or "off" is an error, not a silent false. */
export function envBoolean<const O extends EnvVarOptions<boolean>>(
  name: string,
  opts: O,
): EnvVarFor<boolean, O> {
  const format = "true, false, 1 or 0";
  const schema = z
    .enum(["true", "false", "1", "0"], { error: `must be ${format}` })
    .transform((raw) => raw === "true" || raw === "1");
  return defineEnvVar(name, format, schema, opts) as EnvVarFor<boolean, O>;
}

export function envEnum<
  const V extends readonly [string, ...string[]],
  const O extends EnvVarOptions<V[number]>,
>(name: string, values: V, opts: O): EnvVarFor<V[number], O> {
  const format = `one of ${values.join(", ")}`;
  const schema = z.enum(values as unknown as [V[number], ...V[number][]], { error: `must be ${format}` });
  return defineEnvVar(name, format, schema as z.ZodType<V[number]>, opts) as EnvVarFor<V[number], O>;
}

/**
 * Comma-separated list; blanks around items are ignored, empty items are an error, and so is an
 * item `each` (what every item must be) refuses.
 */
export function envList<
  const O extends EnvVarOptions<readonly string[]> & { each?: { format: string; test: (item: string) => boolean } },
>(name: string, opts: O): EnvVarFor<readonly string[], O> {
  const { each } = opts;
  const format = each ? `a comma-separated list of ${each.format}` : "a comma-separated list";
  const schema = z
    .string()
    .transform((raw) => raw.split(",").map((item) => item.trim()))
    .refine((items) => items.every((item) => item.length > 0), `must be ${format} without empty items`)
    .superRefine((items, ctx) => {
      const bad = each ? items.filter((item) => !each.test(item)) : [];
      if (bad.length > 0) ctx.addIssue({ code: "custom", message: `must be ${format}; not one: ${bad.join(", ")}` });
    });
  return defineEnvVar(name, format, schema, opts, (value: readonly string[]) => value.join(",")) as EnvVarFor<
    readonly string[],
    O
  >;
}
