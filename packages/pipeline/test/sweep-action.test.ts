import { describe, expect, it } from "vitest";
import { sweepAction } from "../src/maintenance/sweep-action.ts";

const GRACE = 30_000;
const old = { dispatched: true, ageMs: 60_000 };

describe("sweepAction", () => {
  it("re-queues a job Redis no longer holds", () => {
    expect(sweepAction({ ...old, state: "unknown" }, GRACE)).toBe("requeue");
  });
  it("releases the task of a job that ended without reporting back", () => {
    expect(sweepAction({ ...old, state: "failed" }, GRACE)).toBe("release");
    expect(sweepAction({ ...old, state: "completed" }, GRACE)).toBe("release");
  });
  it("leaves jobs on their way alone", () => {
    for (const state of ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const)
      expect(sweepAction({ ...old, state }, GRACE)).toBe("leave");
  });
  it("does not judge a young or undispatched follow-up", () => {
    expect(sweepAction({ dispatched: true, ageMs: 1_000, state: "unknown" }, GRACE)).toBe("leave");
    expect(sweepAction({ dispatched: false, ageMs: 60_000, state: "unknown" }, GRACE)).toBe("leave");
  });
});
