import { useTestRepositories } from "./support/test-repositories.ts";
import { describe, expect, it } from "vitest";

const db = useTestRepositories();

const message = (chatId: number, channel: "telegram" | "gitea" = "telegram") =>
  db.repos.notifications.create({ channel, chatId, template: "bot.help", params: {} });

describe("NotificationRepository, sender side", () => {
  it("lists a chat's pending messages oldest first, up to the given one, and nothing else", async () => {
    const [first, sending, second, otherChat, gitea, third, later] = [
      await message(501),
      await message(501),
      await message(501),
      await message(502),
      await message(501, "gitea"),
      await message(501),
      await message(501),
    ];
    await db.repos.notifications.claim(sending!.id);

    const pending = await db.repos.notifications.listPendingForChat(501, third!.id);

    expect(pending.map((n) => n.id)).toEqual([first!.id, second!.id, third!.id]);
    expect(pending.map((n) => n.id)).not.toContain(later!.id);
    expect(pending.map((n) => n.id)).not.toContain(otherChat!.id);
    expect(pending.map((n) => n.id)).not.toContain(gitea!.id);
    expect(await db.repos.notifications.listPendingForChat(501, third!.id, 2)).toHaveLength(2);
  });

  it("keeps the parts that went out when a send is released, so the retry resumes after them", async () => {
    const notification = await message(503);
    await db.repos.notifications.claim(notification.id);

    expect(await db.repos.notifications.release(notification.id, "429 after part 2", [11, 12])).toBe(true);
    const retried = await db.repos.notifications.claim(notification.id);

    expect(retried).toMatchObject({ status: "sending", attempts: 2, error: "429 after part 2" });
    expect(retried?.sentMessageIds).toEqual([11n, 12n]);
  });
});
