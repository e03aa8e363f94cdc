/**
 * Imported by the lazy-loading probe before the services: records which Intl formatters are
 * constructed, so the probe can tell whether start-up and idling made any (each reads ICU data out
 * of node's binary, megabytes of resident pages).
 */
export const constructedIntl = new Set<string>();

for (const name of ["NumberFormat", "PluralRules", "Segmenter", "DateTimeFormat", "Collator"] as const) {
  const original = Intl[name] as unknown as new (...args: unknown[]) => object;
  (Intl as unknown as Record<string, unknown>)[name] = new Proxy(original, {
    construct(target, args, newTarget) {
      constructedIntl.add(`Intl.${name}`);
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
}
