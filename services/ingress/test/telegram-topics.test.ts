import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IngressHarness } from "./support/ingress-harness.ts";

/** A forum supergroup: every answer goes to the topic the message came from (issue 21.4). */
const FORUM = -100_4242;
const TOPIC = 77;
let h: IngressHarness;

beforeAll(async () => {
  h = await IngressHarness.start({ TELEGRAM_ALLOWED_CHAT_IDS: String(FORUM) });
});
afterAll(async () => {
  await h?.stop();
});

const threadsOf = async (template: string) => (await h.notifications(FORUM, template)).map((n) => n.threadId);

describe("telegram forum topics", () => {
  it("answers a command in the topic it was sent in, and one sent in General in General", async () => {
    h.say(FORUM, "/status", undefined, undefined, TOPIC);
    h.say(FORUM, "/help");
    await h.settled();
    expect(await threadsOf("bot.versions")).toEqual([TOPIC]);
    expect(await threadsOf("bot.help")).toEqual([null]);
  });

  it("sends every message of a task opened in a topic to that topic, whatever triggers it", async () => {
    h.say(FORUM, "/start", undefined, undefined, TOPIC);
    await h.settled();
    const task = await h.onlyTask(FORUM);
    expect(task.threadId).toBe(TOPIC);
    expect(await threadsOf("bot.greeting")).toEqual([TOPIC]);
    // A step of the pipeline (no message behind it) notifies the task's topic too.
    await h.transition(task.id, { type: "user.cancelled" });
    const notices = await h.prisma.notification.findMany({ where: { taskId: task.id }, orderBy: { id: "asc" } });
    expect(notices.length).toBeGreaterThan(1);
    expect(notices.map((n) => n.threadId)).toEqual(notices.map(() => TOPIC));
  });
});
