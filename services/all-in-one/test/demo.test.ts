import { randomBytes } from "node:crypto";
import { inject, describe, expect, it } from "vitest";
import { deleteKeysWithPrefix, dropSchema } from "@ratatoskr/testkit/vitest";
import { runDemo } from "../src/demo/demo.ts";
import { bareGit } from "../src/demo/demo-git.ts";

describe("demo mode", () => {
  it("plays the whole flow to a pushed, reviewed branch and prints each step with its time", async () => {
    const lines: string[] = [];
    const id = randomBytes(4).toString("hex");
    const env = {
      REDIS_URL: inject("redisUrl"),
      DATABASE_URL: inject("databaseUrl"),
      HTTP_PORT: "0",
      LOG_LEVEL: "silent",
    };
    const [schema, prefix] = [`demo_${id}`, `demo-${id}`];
    const demo = await runDemo(env, (line) => lines.push(line), { schema, prefix });
    try {
      const transcript = lines.join("\n");
      // The dialogue, each line stamped with its time.
      expect(transcript).toMatch(/\[\+\s*\d+\.\d s\] 👤 \/start[\s\S]*🤖 .*Task #1/);
      expect(transcript).toContain("What should /health answer");
      expect(transcript).toMatch(/Draft of task #1[\s\S]*demo\/hello/);
      // The draft's buttons as the chat shows them, under its text; the person presses one of them.
      expect(transcript).toMatch(/Draft of task #1[\s\S]*\n {12}\[ [^\]\n]*Approve[^\]\n]* \]/);
      expect(transcript).toMatch(/\[presses [^\]\n]*Approve[^\]\n]*\][\s\S]*🤖 .*approved/);
      // Not a terminal: no colour codes; no log line with a stack trace among the messages.
      expect(transcript).not.toContain("\u001b[");
      expect(transcript).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
      expect(transcript).not.toContain('{"level"');
      // The pipeline, in order: dev, the reviewer's one change, dev again, review passed, success.
      const steps = [
        "Task #1: the developer agent is at work",
        "Task #1, round 1: the changes are pushed and the reviewer is checking them",
        "Task #1, round 1: the reviewer left 1 remark",
        "Task #1, round 2: the changes are pushed and the reviewer is checking them",
        "Task #1 is done",
      ];
      const at = steps.map((step) => transcript.indexOf(step));
      expect(
        at.every((i) => i >= 0),
        `${at.join(",")}\n${transcript}`,
      ).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      expect(transcript).not.toMatch(/failed|analysis of task/i);

      // What was pushed: two commits on the task branch, the last one answering JSON.
      expect(demo.succeeded).toBe(true);
      expect(demo.branch).toMatch(/^ratatoskr\/1-/);
      const branch = demo.branch!;
      const server = await bareGit(demo.bareRepo, ["show", `refs/heads/${branch}:server.js`]);
      expect(server).toContain('"Content-Type": "application/json"');
      expect(server).toContain('JSON.stringify({ status: "ok" })');
      const subjects = await bareGit(demo.bareRepo, ["log", "--format=%s", `main..refs/heads/${branch}`]);
      expect(subjects.trim().split("\n")).toHaveLength(2);
      expect(transcript).toContain(`Task #1 is done`);
      expect(transcript).toContain(branch);
      // The transcript ends with the branch's log --stat and how to look at it.
      expect(transcript).toMatch(/server\.js \| +\d+ [+-]+/);
      expect(transcript).toContain(`git clone -b ${branch} ${demo.bareRepo} hello`);
    } finally {
      expect(await demo.stop()).toBe(true);
      await dropSchema(env.DATABASE_URL, schema);
      await deleteKeysWithPrefix(env.REDIS_URL, prefix);
    }
  }, 300_000);
});
