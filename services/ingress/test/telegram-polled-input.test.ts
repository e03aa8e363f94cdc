import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IngressHarness } from "./support/ingress-harness.ts";

/** Long polling takes hostile updates as the webhook does: each gets one definite outcome. */
const CHAT = 3101;
let h: IngressHarness;

beforeAll(async () => {
  h = await IngressHarness.start({ TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT) });
});
afterAll(async () => {
  await h?.stop();
});

describe("polled updates", () => {
  it("stores an update nested 5,000 levels deep as poison and polls on: the chat's next message is handled", async () => {
    // 10 KB; JSON.stringify of the parsed update overflows the stack.
    h.say(CHAT, "hi", undefined, { x: `${"[".repeat(5_000)}${"]".repeat(5_000)}` });
    h.say(CHAT, "Add a health endpoint to acme/api");
    await h.settled();
    const stored = await h.prisma.telegramUpdate.findMany({ orderBy: { updateId: "asc" } });
    expect(stored.map((u) => [u.status, u.error])).toEqual([
      ["poison", expect.stringMatching(/nested deeper than 64 levels/)],
      ["done", null],
    ]);
    expect(await h.turnTexts((await h.onlyTask(CHAT)).id)).toEqual(["Add a health endpoint to acme/api"]);
  });
});
