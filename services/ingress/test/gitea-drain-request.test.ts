import type { JobRequest } from "@ratatoskr/contracts";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { drainRequester } from "../src/gitea/store/drain-request.ts";

/** A replica that takes no intake jobs announces its stored commands, a window at a time. */
describe("drainRequester", () => {
  let newest = 0;
  let asked: JobRequest[] = [];
  let failures: Array<[string, number]> = [];
  let refuse = false;
  const request = () =>
    drainRequester({
      enqueue: async (job) => {
        if (refuse) throw new Error("redis away");
        asked.push(job as JobRequest);
        return { jobId: job.jobId };
      },
      newestStored: () => newest,
      onError: (err, upTo) => failures.push([(err as Error).message, upTo]),
    });

  beforeEach(() => {
    vi.useFakeTimers();
    newest = 0;
    asked = [];
    failures = [];
    refuse = false;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("asks once for the commands stored within a window, naming the newest", async () => {
    const stored = request();
    newest = 7;
    stored();
    newest = 9;
    stored();
    stored();
    expect(asked).toEqual([]);
    await vi.advanceTimersByTimeAsync(25);
    expect(asked).toEqual([
      { queue: "intake", data: { v: 1, kind: "drain-commands", upTo: 9 }, jobId: "drain-commands-9" },
    ]);
    newest = 12;
    stored();
    await vi.advanceTimersByTimeAsync(25);
    expect(asked.map((a) => a.jobId)).toEqual(["drain-commands-9", "drain-commands-12"]);
  });

  it("does not ask again when nothing new was stored (a duplicate delivery)", async () => {
    const stored = request();
    newest = 3;
    stored();
    await vi.advanceTimersByTimeAsync(25);
    stored();
    await vi.advanceTimersByTimeAsync(25);
    expect(asked.map((a) => a.jobId)).toEqual(["drain-commands-3"]);
  });

  it("reports a job Redis refused, and asks for newer commands afterwards", async () => {
    const stored = request();
    newest = 4;
    refuse = true;
    stored();
    await vi.advanceTimersByTimeAsync(25);
    expect(failures).toEqual([["redis away", 4]]);
    refuse = false;
    newest = 5;
    stored();
    await vi.advanceTimersByTimeAsync(25);
    expect(asked.map((a) => a.jobId)).toEqual(["drain-commands-5"]);
  });
});
