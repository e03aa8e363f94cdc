import type { Prisma } from "@ratatoskr/db";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TEMPLATE_IDS } from "../src/i18n/index.ts";
import { NotifierHarness, WAIT } from "./support/notifier-harness.ts";
import { SAMPLES } from "./support/template-samples.ts";

/**
 * Issue 21 item 5: a notifier that dies after claiming a message (before Telegram has seen it)
 * leaves it `sending`. What the person must act on, and what tells them where the task stands or
 * how it ended, is sent once more marked "(resent)"; only acknowledgements (answers to their own
 * command, which asking again brings back) are recorded uncertain and never sent.
 */
const ACKNOWLEDGEMENTS = new Set([
  "bot.help",
  "bot.unknown-command",
  "bot.task-number-needed",
  "bot.not-allowed",
  "bot.text-only",
  "bot.versions",
  "bot.attach",
  "bot.attach-none",
  "bot.nothing-to-cancel",
  "task.not-found",
  "task.approved",
  "task.already-approved",
  "task.retry-refused",
  "task.retried",
  "task.continued",
  "task.status",
  "task.budget-extended",
  "task.not-paused",
]);

const MESSAGES = TEMPLATE_IDS.filter((id) => !id.startsWith("button."));

let h: NotifierHarness;
beforeAll(async () => {
  h = await NotifierHarness.start({ env: { NOTIFIER_GLOBAL_PER_SECOND: "1000" } });
});
afterAll(async () => {
  await h.stop();
});

describe("notifier: a message left mid-send by a notifier that died", () => {
  it("is sent once more, marked (resent), unless it is an acknowledgement — every template", async () => {
    const rows = await Promise.all(
      MESSAGES.map(async (template, i) => {
        const chatId = 8_100 + i;
        h.fake.addChat(chatId);
        const row = await h.message(chatId, template, SAMPLES[template] as Prisma.InputJsonObject);
        // The dead notifier's claim: the send record written, the request never seen by Telegram.
        expect(await h.repos.notifications.claim(row.id)).not.toBeNull();
        return { template, chatId, id: row.id };
      }),
    );
    for (const row of rows) await h.enqueue(row.id);

    for (const { template, chatId, id } of rows) {
      const settled = await vi.waitFor(async () => {
        const now = await h.notification(id);
        expect(["sent", "uncertain"], `${template} is still ${now.status}`).toContain(now.status);
        return now;
      }, WAIT);
      const sent = h.fake.sent(chatId);
      if (ACKNOWLEDGEMENTS.has(template)) {
        expect({ template, status: settled.status, sent: sent.length }).toEqual({ template, status: "uncertain", sent: 0 });
      } else {
        expect({ template, status: settled.status, sent: sent.length }).toEqual({ template, status: "sent", sent: 1 });
        expect(sent[0]!.plainText.startsWith("(resent)\n"), template).toBe(true);
        expect(settled.uncertainAt, template).toBeInstanceOf(Date);
      }
    }
  }, 60_000);
});
