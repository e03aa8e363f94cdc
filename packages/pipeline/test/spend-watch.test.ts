import { describe, expect, it } from "vitest";
import { watchSpend } from "../src/run/spend-watch.ts";

describe("watchSpend (P5 during a run)", () => {
  it("stops the run the moment the spend before it plus its live spend passes the budget, once", () => {
    const watch = watchSpend({ budgetUsd: 1, spentUsd: 0.6 });
    watch.observe({ costUsd: 0.3 });
    watch.observe({ costUsd: 0.4 });
    expect(watch.signal.aborted).toBe(false);
    expect(watch.exceeded()).toBeUndefined();

    watch.observe({ costUsd: 0.41 });
    expect(watch.signal.aborted).toBe(true);
    expect(watch.exceeded()).toEqual({ spentUsd: 1.01, budgetUsd: 1 });
    // A later, larger sample does not move the figure the person is shown.
    watch.observe({ costUsd: 0.9 });
    expect(watch.exceeded()).toEqual({ spentUsd: 1.01, budgetUsd: 1 });
  });

  it("stops a run whose task was already past its budget at its first sample", () => {
    const watch = watchSpend({ budgetUsd: 0.5, spentUsd: 0.7 });
    watch.observe({ costUsd: 0 });
    expect(watch.exceeded()).toEqual({ spentUsd: 0.7, budgetUsd: 0.5 });
  });
});
