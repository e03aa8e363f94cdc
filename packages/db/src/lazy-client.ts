/**
 * An object that stands for `create()`'s result and creates it on first use: the first property
 * read (a model, `$transaction`, `$queryRaw`…) builds it, and later reads go to it. Methods are
 * bound to the real object, so its own private fields work. `created()` tells whether it exists.
 */
export function lazyObject<T extends object>(create: () => T): { proxy: T; created: () => boolean } {
  let real: T | undefined;
  const bound = new Map<PropertyKey, unknown>();
  const target = () => (real ??= create());
  const proxy = new Proxy({} as T, {
    get(_, key) {
      const value: unknown = Reflect.get(target(), key);
      if (typeof value !== "function") return value;
      // Cached so a hot method is not re-bound on every call; a property holding a function that
      // is later replaced is re-bound.
      const cached = bound.get(key) as { of: unknown; fn: unknown } | undefined;
      if (cached?.of === value) return cached.fn;
      const fn = (value as (...args: unknown[]) => unknown).bind(target());
      bound.set(key, { of: value, fn });
      return fn;
    },
    has: (_, key) => Reflect.has(target(), key),
    set: (_, key, value) => Reflect.set(target(), key, value),
  });
  return { proxy, created: () => real !== undefined };
}
