import { describe, expect, it } from "vitest";
import { withCause } from "../src/index.ts";

describe("withCause", () => {
  it("joins a context and its cause", () => {
    expect(withCause("dev round 2 failed", "the git host is unreachable")).toBe("dev round 2 failed: the git host is unreachable");
  });

  it("says a cause that already carries the context once", () => {
    expect(withCause("review of round 1 failed", "Review of round 1 failed: the diff is empty")).toBe("Review of round 1 failed: the diff is empty");
    expect(withCause("push of b rejected", "the dev agent failed: push of b rejected")).toBe("the dev agent failed: push of b rejected");
  });

  it("drops a job's retry wrapper and a cause the context already holds", () => {
    expect(withCause("the analysis gave up", "analysis run failed, will retry: opencode is unreachable")).toBe("the analysis gave up: opencode is unreachable");
    expect(withCause("could not reach opencode (timeout)", "timeout")).toBe("could not reach opencode (timeout)");
  });
});
