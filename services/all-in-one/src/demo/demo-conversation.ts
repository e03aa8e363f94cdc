import { formatCallbackData } from "@ratatoskr/contracts";
import type { FakeTelegram, SentRecord } from "@ratatoskr/testkit";
import { demoStyle, renderButtons, type DemoStyle } from "./demo-style.ts";

const REPLY_TIMEOUT_MS = 60_000;
/** Two dev rounds and two reviews against the scripted model: well under a minute; generous for a slow machine. */
const PIPELINE_TIMEOUT_MS = 240_000;

export interface DemoConversationOptions {
  telegram: FakeTelegram;
  chatId: number;
  print: (line: string) => void;
  /** Time origin of the transcript's `[+12.3 s]` stamps. */
  startedAt?: number;
  style?: DemoStyle;
}

export interface DemoOutcome {
  taskId: number;
  /** The bot's last message: the task's success, or why it stopped. */
  final: string;
  succeeded: boolean;
}

/** `[+  4.2 s]`: how far into the demo a line happened. */
export function stamp(startedAt: number, now = Date.now()): string {
  return `[+${((now - startedAt) / 1000).toFixed(1).padStart(5)} s]`;
}

/** The bot's texts that end the flow: done, failed, stopped by timeout or by the budget, cancelled. */
const FINAL = /is done|failed\.|ran out of time|is paused|is cancelled/;

/**
 * Plays the person in the fake chat: a request, an answer to the analyst's question, and the
 * Approve button; then follows the pipeline (dev ⇄ reviewer rounds) to its end. Prints both
 * sides as they happen, each with its time.
 */
export async function playDemoConversation({
  telegram,
  chatId,
  print,
  startedAt = Date.now(),
  style = demoStyle(false),
}: DemoConversationOptions): Promise<DemoOutcome> {
  let seen = 0;
  const indent = "\n            ";
  const at = () => style.dim(stamp(startedAt));
  const say = (text: string) => {
    print(`\n${at()} ${style.person(`👤 ${text}`)}`);
    telegram.sendText(chatId, text, { from: { first_name: "Demo", username: "demo_person" } });
  };
  /** Prints the bot's messages as they arrive, until one matches `until` (returned). */
  const botSays = async (
    until: (record: SentRecord) => boolean,
    timeoutMs = REPLY_TIMEOUT_MS,
  ): Promise<SentRecord> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = await telegram.waitForMessages(chatId, (_r, all) => all.length > seen, {
        timeoutMs: Math.max(1, deadline - Date.now()),
        kind: "sent",
      });
      const fresh = records.slice(seen);
      seen = records.length;
      for (const record of fresh) {
        // The message as the chat shows it: its text, then its buttons.
        const buttons = renderButtons(record.replyMarkup?.inline_keyboard, style);
        const text = [record.plainText, ...(buttons.length > 0 ? ["", ...buttons] : [])].join("\n");
        print(`\n${at()} ${style.bot(`🤖 ${text.replaceAll("\n", indent)}`)}`);
      }
      const hit = fresh.find(until);
      if (hit) return hit;
    }
  };

  say("/start");
  const greeting = await botSays(() => true);
  const taskId = Number(/#(\d+)/.exec(greeting.plainText)?.[1]);

  say("Please add a health endpoint to demo/hello, the load balancer needs one.");
  await botSays(() => true);

  say('JSON {"status":"ok"} with status 200, please.');
  const draft = await botSays((r) => (r.replyMarkup?.inline_keyboard.flat().length ?? 0) > 0);

  const approve = draft.replyMarkup?.inline_keyboard.flat().find((b) => b.callback_data === formatCallbackData({ action: "approve", taskId }));
  print(`\n${at()} ${style.person(`👤 [presses ${approve?.text ?? "Approve"}]`)}`);
  telegram.pressButton(chatId, draft.messageId, formatCallbackData({ action: "approve", taskId }));
  const final = await botSays(
    (r) => r.plainText.includes(`#${taskId}`) && FINAL.test(r.plainText),
    PIPELINE_TIMEOUT_MS,
  );
  return { taskId, final: final.plainText, succeeded: final.plainText.includes("is done") };
}
