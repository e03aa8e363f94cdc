import {
  AgentMessageError,
  OpencodeHttpError,
  OpencodeTooOldError,
  OpencodeUnavailableError,
  ProviderError,
  SilentSessionError,
  VerdictValidationError,
} from "@ratatoskr/opencode";
import { describe, expect, it } from "vitest";
import { isAnalysisAlreadySettled } from "../src/handlers/stale-analysis.ts";
import { classifyRunFailure } from "../src/run/run-failure.ts";

const failed = (error: Error, output = "") => classifyRunFailure({ outcome: "failed", error, output });

describe("agent run failures", () => {
  it("settles an unusable verdict at once with the specific problem (the client already repaired once)", () => {
    expect(failed(new VerdictValidationError("x", '{"phase":"maybe"}'), '{"phase":"maybe"}')).toEqual({
      action: "settle",
      problem: "unknown-phase",
    });
  });

  it("settles a timeout instead of retrying a run that used its whole budget", () => {
    expect(classifyRunFailure({ outcome: "timeout", error: new Error("idle"), output: "" })).toEqual({
      action: "settle",
      problem: "timeout",
    });
  });

  it("retries an unreachable server, a silent session and a provider error", () => {
    expect(failed(new OpencodeUnavailableError("http://x", "ECONNREFUSED"))).toEqual({
      action: "retry",
      problem: "unavailable",
    });
    expect(failed(new SilentSessionError("ses_1", "http://x", "fake/m"))).toEqual({
      action: "retry",
      problem: "no-verdict",
    });
    expect(failed(new AgentMessageError("ses_1", "provider 500"))).toEqual({
      action: "retry",
      problem: "no-verdict",
    });
    expect(failed(new OpencodeHttpError("POST", "http://x", 503, ""))).toEqual({
      action: "retry",
      problem: "unavailable",
    });
    expect(failed(new ProviderError("ses_1", "fake", 429, true, "slow down"))).toEqual({
      action: "retry",
      problem: "no-verdict",
    });
  });

  it("settles a provider that refused the credentials instead of retrying it, and says the provider refused", () => {
    expect(failed(new ProviderError("ses_1", "fake", 401, false, "bad key"))).toEqual({
      action: "settle",
      problem: "provider-refused",
    });
  });

  it("settles what only an operator can fix, saying the server is too old or misconfigured", () => {
    expect(failed(new OpencodeTooOldError("http://x", "1.0.0", "1.18.18"))).toEqual({
      action: "settle",
      problem: "server-misconfigured",
    });
    expect(failed(new OpencodeHttpError("POST", "http://x", 400, "bad agent"))).toEqual({
      action: "settle",
      problem: "server-misconfigured",
    });
  });

  it("leaves a cancelled run to the worker (shutdown hand-back or job cancel)", () => {
    expect(classifyRunFailure({ outcome: "cancelled", error: new Error("cancelled"), output: "" })).toEqual({
      action: "interrupted",
    });
  });
});

describe("a stalled analysis job run again", () => {
  const events = [
    { type: "turn.received", version: 1 },
    { type: "turn.received", version: 2 },
    { type: "analyst.asked", version: 3 },
  ];

  it("is recognized when an analyst event came after the version that requested it", () => {
    expect(isAnalysisAlreadySettled("5-analyst-1", 5, events)).toBe(true);
  });

  it("is not confused with the follow-up analysis that event requested, or with other ids", () => {
    expect(isAnalysisAlreadySettled("5-analyst-3", 5, events)).toBe(false);
    expect(isAnalysisAlreadySettled("6-analyst-1", 5, events)).toBe(false);
    expect(isAnalysisAlreadySettled("manual", 5, events)).toBe(false);
    expect(isAnalysisAlreadySettled(undefined, 5, events)).toBe(false);
  });
});
