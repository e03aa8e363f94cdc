import { describe, expect, it } from "vitest";
import { jobEndOf, jobEndReason, lostStepReason, withoutRetryWrapper } from "../src/index.ts";

describe("how a job ended outside its handler", () => {
  it("says the worker died when BullMQ failed it for stalling or restarting too often", () => {
    const stalled = jobEndOf({ failedReason: "job stalled more than allowable limit", attemptsMade: 0, attemptsStarted: 3 }, "failed");
    expect(stalled).toEqual({ kind: "worker-died", attempts: 3 });
    expect(lostStepReason("dev", stalled, { id: 12, source: "telegram" })).toBe(
      "the dev round was cut off: the process running it died 3 times in a row (killed or crashed); /retry 12 starts the task again",
    );
    // A Gitea command is started again by a new comment, not by /retry.
    expect(lostStepReason("dev", stalled, { id: 12, source: "gitea" })).toMatch(
      /died 3 times in a row \(killed or crashed\); comment the command again on its issue or pull request to retry$/,
    );
    expect(jobEndOf({ failedReason: "job started more than allowable limit", attemptsMade: 1 }, "failed").kind).toBe("worker-died");
  });

  it("gives the last attempt's own error when every attempt threw, without the retry wrapper", () => {
    const end = jobEndOf({ failedReason: "review run failed, will retry: opencode at http://x is unreachable", attemptsMade: 3 }, "failed");
    expect(end).toEqual({ kind: "attempts-exhausted", attempts: 3, lastError: "opencode at http://x is unreachable" });
    expect(jobEndReason("review", end)).toBe("the review gave up after 3 attempts: opencode at http://x is unreachable");
  });

  it("says only that it ended without a report when it completed or is gone", () => {
    expect(jobEndOf({ attemptsMade: 1 }, "completed")).toEqual({ kind: "no-report" });
    expect(jobEndOf(undefined, "failed")).toEqual({ kind: "no-report" });
    expect(withoutRetryWrapper("plain")).toBe("plain");
  });
});
