import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { IngressHarness, WAIT } from "./support/ingress-harness.ts";

const SECRET = "wh-Secret_0123456789";
const WEBHOOK_PATH = "/telegram/webhook";
const ALLOWED_USER = 7001;
const OTHER_GROUP = -100_555;

let nextUpdateId = 1;
let nextMessageId = 1;

/** A text message as Telegram posts it (private chat: user id = chat id unless `from` is given). */
function textUpdate(chatId: number, text: string, extra: Record<string, unknown> = {}) {
  return {
    update_id: nextUpdateId++,
    message: {
      message_id: nextMessageId++,
      date: 1_700_000_000,
      chat: { id: chatId, type: chatId < 0 ? "group" : "private" },
      from: { id: Math.abs(chatId), is_bot: false, first_name: "Ann" },
      text,
      ...extra,
    },
  };
}

describe("webhook intake: the update is the unit of idempotency, taken fast and durably", () => {
  let h: IngressHarness;
  let chat = 8000;

  beforeAll(async () => {
    h = await IngressHarness.start({
      TELEGRAM_ALLOWED_CHAT_IDS: Array.from({ length: 40 }, (_, i) => 8000 + i).join(","),
      TELEGRAM_ALLOWED_USER_IDS: String(ALLOWED_USER),
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:9${WEBHOOK_PATH}`,
      TELEGRAM_WEBHOOK_SECRET: SECRET,
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const post = (body: unknown) =>
    h.host.http.inject({
      method: "POST",
      url: WEBHOOK_PATH,
      payload: body as object,
      headers: { "x-telegram-bot-api-secret-token": SECRET },
    });

  const freshChat = () => ++chat;

  it("takes an update id once: posted twice, it is one task with one turn", async () => {
    const c = freshChat();
    const update = textUpdate(c, "Add a health endpoint to acme/api");
    expect((await post(update)).statusCode).toBe(200);
    expect((await post(update)).statusCode).toBe(200);
    await h.inboxDrained();
    expect((await post(update)).statusCode).toBe(200);
    await h.inboxDrained();
    const task = await h.onlyTask(c);
    expect(await h.turnTexts(task.id)).toEqual(["Add a health endpoint to acme/api"]);
    expect((await h.host.context.repos.tasks.findById(task.id))?.pendingTurns).toBe(1);
  });

  it("stores one message once even when it comes back under a new update id", async () => {
    const c = freshChat();
    const first = textUpdate(c, "Add a health endpoint to acme/api");
    await post(first);
    await post({ ...first, update_id: nextUpdateId++ });
    await h.inboxDrained();
    const task = await h.onlyTask(c);
    expect(await h.turnTexts(task.id)).toEqual(["Add a health endpoint to acme/api"]);
  });

  it("acknowledges poison updates, logs them, and they never hold up the chat's next message", async () => {
    const c = freshChat();
    const poison = [
      textUpdate(c, "one\u0000two"),
      { update_id: nextUpdateId++, message: { message_id: 1, chat: { id: 2 ** 60 }, text: "huge chat" } },
      {
        update_id: nextUpdateId++,
        callback_query: {
          id: "q-range",
          from: { id: c },
          message: { message_id: 1, chat: { id: c } },
          data: "approve:99999999999",
          chat_instance: "x",
        },
      },
    ];
    for (const update of poison) expect((await post(update)).statusCode).toBe(200);
    expect((await post(textUpdate(c, "and a readiness endpoint"))).statusCode).toBe(200);
    await h.inboxDrained();
    const task = await h.onlyTask(c);
    // The NUL is stripped at the edge, so that text is not poison at all: it is a turn.
    expect(await h.turnTexts(task.id)).toEqual(["onetwo", "and a readiness endpoint"]);
    const stored = await h.prisma.telegramUpdate.findMany({ where: { status: "poison" } });
    expect(stored.map((u) => u.error)).toEqual([expect.stringContaining("chat.id")]);
  });

  it("stores an update nested 5,000 levels deep as the bytes it came as: 200 once, poison, never a 500", async () => {
    const c = freshChat();
    const updateId = nextUpdateId++;
    // 10 KB, far under the size limit; serialising the parsed value again overflows the stack.
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    const raw = `{"update_id":${updateId},"message":{"message_id":${nextMessageId++},"chat":{"id":${c}},"text":"hi","x":${deep}}}`;
    const send = () =>
      h.host.http.inject({
        method: "POST",
        url: WEBHOOK_PATH,
        payload: raw,
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
      });
    expect((await send()).statusCode).toBe(200);
    expect((await send()).statusCode).toBe(200);
    const stored = await h.prisma.telegramUpdate.findUniqueOrThrow({ where: { updateId: BigInt(updateId) } });
    expect(stored.payload).toBe(raw);
    expect(stored.status).toBe("poison");
    expect(stored.error).toMatch(/nested deeper than 64 levels/);
    // The chat goes on as if it had never come.
    expect((await post(textUpdate(c, "Add a health endpoint to acme/api"))).statusCode).toBe(200);
    await h.inboxDrained();
    expect(await h.turnTexts((await h.onlyTask(c)).id)).toEqual(["Add a health endpoint to acme/api"]);
  });

  it("stores a webhook update as the bytes it came as, not re-serialised", async () => {
    const c = freshChat();
    const updateId = nextUpdateId++;
    const raw = `{ "update_id": ${updateId},\n  "message": {"message_id": ${nextMessageId++}, "chat": {"id": ${c}}, "text": "caf\u00e9 <b>"} }`;
    const res = await h.host.http.inject({
      method: "POST",
      url: WEBHOOK_PATH,
      payload: raw,
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
    });
    expect(res.statusCode).toBe(200);
    const stored = await h.prisma.telegramUpdate.findUniqueOrThrow({ where: { updateId: BigInt(updateId) } });
    expect(stored.payload).toBe(raw);
    await h.inboxDrained();
    expect(await h.turnTexts((await h.onlyTask(c)).id)).toEqual(["café <b>"]);
  });

  it("answers 200 during a database outage in handling, retries with backoff, and keeps the chat's order", async () => {
    const c = freshChat();
    const tasks = h.host.context.repos.tasks;
    const real = tasks.findActiveByChat.bind(tasks);
    let failures = 0;
    tasks.findActiveByChat = async (chatId) => {
      if (chatId === c && failures < 3) {
        failures += 1;
        throw Object.assign(new Error("Connection terminated unexpectedly"), { code: "ECONNRESET" });
      }
      return real(chatId);
    };
    try {
      expect((await post(textUpdate(c, "first"))).statusCode).toBe(200);
      expect((await post(textUpdate(c, "second"))).statusCode).toBe(200);
      await vi.waitFor(async () => {
        const task = await h.onlyTask(c);
        expect(await h.turnTexts(task.id)).toEqual(["first", "second"]);
      }, WAIT);
      expect(failures).toBe(3);
    } finally {
      tasks.findActiveByChat = real;
    }
  });

  it("takes a photo's caption as the text and answers other media with 'text only'", async () => {
    const c = freshChat();
    await post(textUpdate(c, "", { text: undefined, caption: "Add a health endpoint to acme/api", photo: [] }));
    await post(textUpdate(c, "", { text: undefined, sticker: { file_id: "x" } }));
    await h.inboxDrained();
    const task = await h.onlyTask(c);
    expect(await h.turnTexts(task.id)).toEqual(["Add a health endpoint to acme/api"]);
    expect(await h.notifications(c, "bot.text-only")).toHaveLength(1);
  });

  it("never refuses an allowlisted user's edit in a group that is not on the list", async () => {
    const edit = {
      update_id: nextUpdateId++,
      edited_message: {
        message_id: 3,
        date: 1_700_000_000,
        edit_date: 1_700_000_100,
        chat: { id: OTHER_GROUP, type: "group" },
        from: { id: ALLOWED_USER, is_bot: false, first_name: "Ann" },
        text: "edited",
      },
    };
    expect((await post(edit)).statusCode).toBe(200);
    await h.inboxDrained();
    expect(await h.notifications(OTHER_GROUP)).toEqual([]);
  });
});
