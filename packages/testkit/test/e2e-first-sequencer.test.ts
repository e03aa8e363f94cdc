import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import E2eFirstSequencer from "../src/vitest/e2e-first.sequencer.ts";

const ROOT = "/repo";
const project = { name: "", config: { isolate: true, sequence: { groupOrder: 0 } } };

/** A sequencer over a results cache of `{ file: [duration, failed?] }` and file sizes. */
function sequencer(results: Record<string, [number, boolean?]>, sizes: Record<string, number>) {
  const cache = {
    getFileTestResults: (key: string) => {
      const known = results[key.slice(1)];
      return known && { duration: known[0], failed: known[1] ?? false };
    },
    getFileStats: (key: string) => ({ size: sizes[key.slice(1)] ?? 0 }),
  };
  return new E2eFirstSequencer({ config: { root: ROOT }, cache } as unknown as Vitest);
}

async function order(results: Record<string, [number, boolean?]>, sizes: Record<string, number>): Promise<string[]> {
  const specs = Object.keys(sizes).map((file) => ({ project, moduleId: `${ROOT}/${file}` }) as unknown as TestSpecification);
  const sorted = await sequencer(results, sizes).sort(specs);
  return sorted.map((spec) => spec.moduleId.slice(ROOT.length + 1));
}

describe("E2eFirstSequencer", () => {
  it("starts end-to-end files first on a fresh clone, the largest first, then the rest by size", async () => {
    const sizes = { "a.test.ts": 9_000, "chaos.e2e.test.ts": 1_000, "big.e2e.test.ts": 5_000, "b.test.ts": 2_000 };
    expect(await order({}, sizes)).toEqual(["big.e2e.test.ts", "chaos.e2e.test.ts", "a.test.ts", "b.test.ts"]);
  });

  it("with a partial cache, runs the longest known files and the unknown end-to-end files first, unknown quick files last", async () => {
    const sizes = { "new.test.ts": 50_000, "chaos.e2e.test.ts": 1_000, "slow.test.ts": 100, "known.e2e.test.ts": 100, "quick.test.ts": 100 };
    const results: Record<string, [number]> = { "slow.test.ts": [90_000], "known.e2e.test.ts": [30_000], "quick.test.ts": [20] };
    expect(await order(results, sizes)).toEqual(["chaos.e2e.test.ts", "slow.test.ts", "known.e2e.test.ts", "quick.test.ts", "new.test.ts"]);
  });

  it("runs the files that failed last time first", async () => {
    const sizes = { "slow.test.ts": 1, "failed.test.ts": 1 };
    expect(await order({ "slow.test.ts": [90_000], "failed.test.ts": [10, true] }, sizes)).toEqual(["failed.test.ts", "slow.test.ts"]);
  });
});
