/**
 * An object that stands for the client `load()` resolves to and loads it on first use. For the
 * Prisma client: its modules (the generated client, Prisma's runtime, the pg adapter) cost ~8 MB
 * of RSS, and an idle process runs its sweeps in plain SQL on the pool, so it never loads them.
 *
 * Once loaded, every read goes to the client (methods bound to it, so its private fields work).
 * Before that, what returns a promise works and loads it: a model's queries (`prisma.task.find…`)
 * and the `$`-calls in PROMISED_CALLS. Such a call returns a thenable that runs when awaited, as
 * Prisma's own queries do, and `$transaction([…])` of them runs them as the client's own queries.
 * Anything else (an unknown key, a symbol, `then`) reads as absent until the client is loaded.
 */
export interface LazyClient<T extends object> {
  proxy: T;
  /** The client, loaded or being loaded; undefined while nothing asked for it. */
  whenLoaded: () => Promise<T> | undefined;
}

/** The client's `$`-calls that return a promise, so they can wait for it to load. */
const PROMISED_CALLS: ReadonlySet<PropertyKey> = new Set([
  "$connect",
  "$disconnect",
  "$executeRaw",
  "$executeRawUnsafe",
  "$queryRaw",
  "$queryRawUnsafe",
  "$transaction",
]);

type Call<T> = (client: T) => unknown;
type AnyFunction = (...args: unknown[]) => unknown;

/** A query asked for before the client was loaded: loads it and runs when awaited. */
class PendingQuery<T> implements PromiseLike<unknown> {
  #result: Promise<unknown> | undefined;

  constructor(
    private readonly ready: () => Promise<T>,
    /** Asks the loaded client for the query (Prisma's own lazy promise, not yet run). */
    readonly call: Call<T>,
  ) {}

  then<A = unknown, B = never>(
    onFulfilled?: ((value: unknown) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.#result ??= this.ready().then(this.call);
    return this.#result.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<unknown> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<unknown> {
    return this.then().finally(onFinally);
  }
}

/** `$transaction([…])`'s queries asked for before the load become the client's own queries. */
function ownQueries<T>(key: PropertyKey, args: unknown[], client: T): unknown[] {
  const [first, ...rest] = args;
  if (key !== "$transaction" || !Array.isArray(first)) return args;
  return [
    first.map((query: unknown) => (query instanceof PendingQuery ? query.call(client) : query)),
    ...rest,
  ];
}

export function lazyClient<T extends object>(
  load: () => Promise<T>,
  models: readonly string[],
): LazyClient<T> {
  let real: T | undefined;
  let loading: Promise<T> | undefined;
  const ready = () =>
    (loading ??= load().then(
      (client) => (real = client),
      (error: unknown) => {
        // Not kept: the next query tries again (and reports its own failure).
        loading = undefined;
        throw error;
      },
    ));
  const pending = (call: Call<T>) => new PendingQuery(ready, call);
  const method =
    (of: (client: T) => object, key: PropertyKey) =>
    (...args: unknown[]) =>
      pending((client) => {
        const target = of(client);
        return (Reflect.get(target, key) as AnyFunction).apply(target, ownQueries(key, args, client));
      });
  const model = (name: string) =>
    new Proxy(
      {},
      {
        get: (_, key) =>
          typeof key === "string" && key !== "then"
            ? method((client) => Reflect.get(client, name) as object, key)
            : undefined,
      },
    );

  const standIns = new Map<PropertyKey, unknown>();
  const standIn = (key: PropertyKey): unknown => {
    if (!PROMISED_CALLS.has(key) && !models.includes(key as string)) return undefined;
    let value = standIns.get(key);
    if (value === undefined) {
      value = PROMISED_CALLS.has(key) ? method((client) => client, key) : model(key as string);
      standIns.set(key, value);
    }
    return value;
  };

  const bound = new Map<PropertyKey, { of: unknown; fn: unknown }>();
  const proxy = new Proxy({} as T, {
    get(_, key) {
      if (real === undefined) return standIn(key);
      const value: unknown = Reflect.get(real, key);
      if (typeof value !== "function") return value;
      // Cached so a hot method is not re-bound on every call; a property holding a function that
      // is later replaced is re-bound.
      const cached = bound.get(key);
      if (cached?.of === value) return cached.fn;
      const fn = (value as AnyFunction).bind(real);
      bound.set(key, { of: value, fn });
      return fn;
    },
    has: (_, key) => (real === undefined ? standIn(key) !== undefined : Reflect.has(real, key)),
    // Nothing writes to the client; a write before it exists would be lost, so it fails instead.
    set: (_, key, value) => real !== undefined && Reflect.set(real, key, value),
  });
  return { proxy, whenLoaded: () => loading };
}
