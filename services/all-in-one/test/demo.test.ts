import { randomBytes } from "node:crypto";
import { inject, describe, expect, it } from "vitest";
import { deleteKeysWithPrefix, dropSchema } from "@ratatoskr/testkit/vitest";
import { runDemo } from "../src/demo/demo.ts";

describe("demo mode", () => {
  it("plays the whole Telegram dialogue against the scripted model and prints both sides", async () => {
    const lines: string[] = [];
    const id = randomBytes(4).toString("hex");
    const env = {
      REDIS_URL: inject("redisUrl"),
      DATABASE_URL: inject("databaseUrl"),
      HTTP_PORT: "0",
      LOG_LEVEL: "silent",
    };
    const [schema, prefix] = [`demo_${id}`, `demo-${id}`];
    const demo = await runDemo(env, (line) => lines.push(line), { schema, prefix, handleSignals: false });
    try {
      const transcript = lines.join("\n");
      expect(transcript).toMatch(/👤 \/start[\s\S]*🤖 .*Task #1/);
      expect(transcript).toContain("What should /health answer");
      expect(transcript).toMatch(/Draft of task #1[\s\S]*demo\/hello/);
      expect(transcript).toMatch(/\[presses Approve\][\s\S]*🤖 .*approved/);
      expect(transcript).toContain('Task #1 is now "approved"');
    } finally {
      await demo.stop();
      await dropSchema(env.DATABASE_URL, schema);
      await deleteKeysWithPrefix(env.REDIS_URL, prefix);
    }
  }, 120_000);
});
