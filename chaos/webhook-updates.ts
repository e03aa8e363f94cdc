import type { ScriptedModel } from "@ratatoskr/testkit";
import { dialogueProbe, newMark, scriptAnswer, type Probe } from "./probes.ts";
import type { World } from "./world.ts";

/** The header Telegram carries the webhook secret in (setWebhook `secret_token`). */
const TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token";
let nextUpdateId = 900_000;

/** Posts one update to ingress's webhook as Telegram would; resolves with the HTTP status. */
async function post(world: World, update: object): Promise<number> {
  const webhook = world.webhook;
  if (!webhook) throw new Error("chaos: this world takes updates by polling");
  const res = await fetch(webhook.url, {
    method: "POST",
    headers: { "content-type": "application/json", [TELEGRAM_SECRET_HEADER]: webhook.secret },
    body: JSON.stringify(update),
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * A person's message delivered twice at the same moment under one update_id (Telegram retrying a
 * webhook it thinks timed out); `replay` posts it a third time, later.
 */
export async function postUpdateTwice(
  world: World,
  model: ScriptedModel,
  chatId: number,
  trial: string,
): Promise<{ probe: Probe; replay(): Promise<number> }> {
  const { mark } = newMark(trial);
  scriptAnswer(model, mark);
  const chat = world.telegram.addChat(chatId);
  const updateId = (nextUpdateId += 1);
  const update = {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: Math.floor(Date.now() / 1000),
      chat,
      from: { id: chatId, is_bot: false, first_name: `User ${chatId}`, language_code: "en" },
      text: `Please build ${mark}`,
    },
  };
  await Promise.all([post(world, update), post(world, update)]);
  return { probe: dialogueProbe(world, chatId, mark), replay: () => post(world, update) };
}
