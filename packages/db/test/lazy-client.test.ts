import { describe, expect, it } from "vitest";
import { Prisma } from "../generated/client.ts";
import { lazyClient } from "../src/lazy-client.ts";
import { PRISMA_MODELS } from "../src/prisma-models.ts";

/** A client shaped like Prisma's: lazy queries on models, `$`-calls, private state. */
class FakeClient {
  #count = 0;
  readonly #mine = new WeakSet<object>();
  readonly ran: string[] = [];
  label = "client";
  readonly task = {
    count: (by = 1) => this.query(`count ${by}`, () => (this.#count += by)),
  };
  /** Runs only when awaited, as a PrismaPromise does. */
  private query<R>(name: string, run: () => R): PromiseLike<R> {
    const query: PromiseLike<R> = {
      then: (ok, fail) =>
        Promise.resolve()
          .then(() => (this.ran.push(name), run()))
          .then(ok, fail),
    };
    this.#mine.add(query);
    return query;
  }
  $queryRaw(strings: TemplateStringsArray, ...values: unknown[]): PromiseLike<string> {
    return this.query("raw", () => `${strings.raw.join("?")} ${values.join(",")}`);
  }
  async $transaction(queries: PromiseLike<unknown>[]): Promise<unknown[]> {
    if (!queries.every((q) => this.#mine.has(q))) throw new Error("not this client's queries");
    return Promise.all(queries);
  }
}

function fake() {
  let loads = 0;
  const client = lazyClient(async () => {
    loads++;
    return new FakeClient();
  }, ["task"]);
  return { ...client, loads: () => loads };
}

describe("lazyClient (how the database loads its Prisma client on first use)", () => {
  it("loads nothing until a query is awaited, then loads once for every query", async () => {
    const { proxy, whenLoaded, loads } = fake();
    const first = proxy.task.count();
    const second = proxy.task.count(2);
    expect(loads()).toBe(0);
    expect(whenLoaded()).toBeUndefined();
    expect(await Promise.all([first, second])).toEqual([1, 3]);
    expect(loads()).toBe(1);
    expect((await whenLoaded())?.ran).toEqual(["count 1", "count 2"]);
  });

  it("runs a query asked for before the load only when it is awaited, as Prisma's own", async () => {
    const { proxy, whenLoaded } = fake();
    const unawaited = proxy.task.count(5);
    expect(await proxy.task.count()).toBe(1);
    expect((await whenLoaded())?.ran).toEqual(["count 1"]);
    expect(await unawaited).toBe(6);
  });

  it("passes a tagged template through, and runs a transaction of earlier queries as the client's own", async () => {
    const { proxy } = fake();
    expect(await proxy.$queryRaw`SELECT ${1}, ${2}`).toBe("SELECT ?, ? 1,2");
    const { proxy: fresh } = fake();
    expect(await fresh.$transaction([fresh.task.count(), fresh.task.count(2)])).toEqual([1, 3]);
  });

  it("offers the models and promised $-calls before the load, and the client's own members after", async () => {
    const { proxy } = fake();
    expect("task" in proxy && "$transaction" in proxy).toBe(true);
    expect("label" in proxy).toBe(false);
    expect((proxy as unknown as { then?: unknown }).then).toBeUndefined();
    await proxy.task.count();
    expect(proxy.label).toBe("client");
    const count = proxy.task.count;
    expect(await count(3)).toBe(4);
  });

  it("tries the load again after it failed", async () => {
    let attempts = 0;
    const { proxy } = lazyClient(async () => {
      if (++attempts === 1) throw new Error("not generated");
      return new FakeClient();
    }, ["task"]);
    await expect(proxy.task.count()).rejects.toThrow("not generated");
    expect(await proxy.task.count()).toBe(1);
  });

  it("knows every model of the generated client", () => {
    const models = Object.values(Prisma.ModelName).map((name) => name[0]!.toLowerCase() + name.slice(1));
    expect([...PRISMA_MODELS].sort()).toEqual(models.sort());
  });
});
