import { formatCallbackData } from "@ratatoskr/contracts";
import type { FakeTelegram, SentRecord } from "@ratatoskr/testkit";

const REPLY_TIMEOUT_MS = 60_000;

export interface DemoConversationOptions {
  telegram: FakeTelegram;
  chatId: number;
  print: (line: string) => void;
}

/**
 * Plays the person in the fake chat: a request, an answer to the analyst's question, and the
 * Approve button. Prints both sides as they happen. Returns the task number.
 */
export async function playDemoConversation({ telegram, chatId, print }: DemoConversationOptions): Promise<number> {
  let seen = 0;
  const say = (text: string) => {
    print(`\n👤 ${text}`);
    telegram.sendText(chatId, text, { from: { first_name: "Demo", username: "demo_person" } });
  };
  const botSays = async (until: (record: SentRecord) => boolean): Promise<SentRecord> => {
    const records = await telegram.waitForMessages(chatId, (_r, all) => all.slice(seen).some(until), {
      timeoutMs: REPLY_TIMEOUT_MS,
      kind: "sent",
    });
    const fresh = records.slice(seen);
    seen = records.length;
    for (const record of fresh) print(`\n🤖 ${record.plainText.replaceAll("\n", "\n   ")}`);
    return fresh.find(until)!;
  };

  say("/start");
  const greeting = await botSays(() => true);
  const taskId = Number(/#(\d+)/.exec(greeting.plainText)?.[1]);

  say("Please add a health endpoint to demo/hello, the load balancer needs one.");
  await botSays(() => true);

  say('JSON {"status":"ok"} with status 200, please.');
  const draft = await botSays((r) => (r.replyMarkup?.inline_keyboard.flat().length ?? 0) > 0);

  print("\n👤 [presses Approve]");
  telegram.pressButton(chatId, draft.messageId, formatCallbackData({ action: "approve", taskId }));
  await botSays(() => true);
  return taskId;
}
