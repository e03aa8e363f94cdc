import { describe, expect, it } from "vitest";
import { coalesceDispatches } from "../src/gitea/intake/dispatch-coalescer.ts";

/** A dispatch whose runs the test finishes by hand, recording what each run was asked. */
function heldDispatch() {
  const runs: { targetKey: string; joined: number | undefined; finish(started: number[]): void; fail(e: Error): void }[] = [];
  const dispatch = (targetKey: string, joined: number | undefined) =>
    new Promise<number[]>((finish, fail) => runs.push({ targetKey, joined, finish, fail }));
  return { runs, dispatch };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("dispatches of one issue/PR asked for while one runs", () => {
  it("go as one more run after it, from the earliest command that joined", async () => {
    const { runs, dispatch } = heldDispatch();
    const coalesced = coalesceDispatches(dispatch);
    const first = coalesced("acme/web#1", 10);
    const later = [coalesced("acme/web#1", 12), coalesced("acme/web#1", 11), coalesced("acme/web#1", 13)];
    await flush();
    expect(runs.map((r) => r.joined)).toEqual([10]);

    runs[0]!.finish([]);
    expect(await first).toEqual([]);
    await flush();
    expect(runs.map((r) => r.joined)).toEqual([10, 11]);
    runs[1]!.finish([11]);
    expect(await Promise.all(later)).toEqual([[11], [11], [11]]);

    // Nothing ran meanwhile: the next ask runs at once, on its own.
    const alone = coalesced("acme/web#1", 14);
    await flush();
    expect(runs.map((r) => r.joined)).toEqual([10, 11, 14]);
    runs[2]!.finish([]);
    await alone;
  });

  it("refresh the whole line when any asker left it rather than joined", async () => {
    const { runs, dispatch } = heldDispatch();
    const coalesced = coalesceDispatches(dispatch);
    const first = coalesced("acme/web#1", 10);
    const merged = [coalesced("acme/web#1", 11), coalesced("acme/web#1", undefined), coalesced("acme/web#1", 12)];
    runs[0]!.finish([]);
    await first;
    await flush();
    expect(runs[1]!.joined).toBeUndefined();
    runs[1]!.finish([11]);
    expect(await Promise.all(merged)).toEqual([[11], [11], [11]]);
  });

  it("never wait on another issue/PR's run", async () => {
    const { runs, dispatch } = heldDispatch();
    const coalesced = coalesceDispatches(dispatch);
    void coalesced("acme/web#1", 1);
    const other = coalesced("acme/web#2", 2);
    await flush();
    expect(runs.map((r) => r.targetKey)).toEqual(["acme/web#1", "acme/web#2"]);
    runs[1]!.finish([2]);
    expect(await other).toEqual([2]);
    runs[0]!.finish([]);
  });

  it("a failed run fails only its own askers, and the waiting ones still run", async () => {
    const { runs, dispatch } = heldDispatch();
    const coalesced = coalesceDispatches(dispatch);
    const first = coalesced("acme/web#1", 1);
    const waiting = coalesced("acme/web#1", 2);
    runs[0]!.fail(new Error("postgres went away"));
    await expect(first).rejects.toThrow("postgres went away");
    await flush();
    expect(runs).toHaveLength(2);
    runs[1]!.fail(new Error("still away"));
    await expect(waiting).rejects.toThrow("still away");
    // Both settled and nothing waits: a new ask runs again.
    const again = coalesced("acme/web#1", 3);
    await flush();
    expect(runs).toHaveLength(3);
    runs[2]!.finish([3]);
    expect(await again).toEqual([3]);
  });
});
