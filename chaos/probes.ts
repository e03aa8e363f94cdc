import { reply, type ScriptedModel } from "@ratatoskr/testkit";
import type { World } from "./world.ts";

/** What a probe's person saw, judged once its round settled. */
export interface Judgement {
  /** When the person first saw the answer they wait for; undefined: never (lost). */
  answeredAt: number | undefined;
  /** Why it was lost: what the world holds of it instead. */
  lost?: string;
  /** Something seen or done twice. */
  duplicated?: string;
  /** Work or a message left unfinished. */
  stuck?: string;
  /** Worth a line in the log, no fault. */
  note?: string;
}

/**
 * One person's request in a world: a message in a chat of its own, or a command on an issue of its
 * own. Its mark (in its text, its scripted answers and every count) tells it apart.
 */
export interface Probe {
  readonly mark: string;
  /** When the person first saw the answer they wait for; undefined while they did not. */
  answeredAt(): number | undefined;
  judge(): Promise<Judgement>;
}

export interface ProbeOutcome {
  probes: number;
  /** Never answered. */
  lost: number;
  /** Answered, told or done more than once. */
  duplicated: number;
  /** Left unfinished: a task not at rest, a message unsent. */
  stuck: number;
  /** Epoch ms of the last first answer, undefined when none came. */
  lastAnsweredAt: number | undefined;
  /** One line per problem, for the log. */
  details: string[];
}

const ANALYST = "You are the analyst of Ratatoskr";
export const ANALYST_DELAY_MS = 1_500;
let sequence = 0;

/** The analyst's question for a mark: what the person must see once. */
export const questionFor = (mark: string) => `Which colour should ${mark} be?`;

/** Teaches the scripted model to answer `mark` (after a short think, so faults land mid-job). */
export function scriptAnswer(model: ScriptedModel, mark: string): void {
  const ask = reply.json({ phase: "ask", questions: [questionFor(mark)] }, { delayMs: ANALYST_DELAY_MS });
  model.addRule({
    name: mark,
    match: (req) => req.system.includes(ANALYST) && req.userTexts.some((t) => t.includes(mark)),
    reply: [ask, ask, ask, ask],
  });
}

/**
 * A mark no other mark contains: bracketed, so that m1's rule never matches m10's message (the
 * model's rules and every count find a mark by substring). `slug` is the same name as a repository
 * name may spell it.
 */
export function newMark(trial: string): { mark: string; slug: string } {
  sequence += 1;
  return { mark: `[${trial}-m${sequence}]`, slug: `${trial}-m${sequence}` };
}

/** The person writes; the update is queued at the fake Telegram (polling or its webhook). */
export function sendProbe(world: World, model: ScriptedModel, chatId: number, trial: string): Probe {
  const { mark } = newMark(trial);
  scriptAnswer(model, mark);
  world.telegram.sendText(chatId, `Please build ${mark}`);
  return dialogueProbe(world, chatId, mark);
}

/** The notifier's visible mark on a must-deliver message sent once more after a doubtful send (issue 7 item 6). */
const RESENT_MARKS = ["(resent)", "(отправлено повторно)"];

type Sends = { first: number[]; resent: number[] };
const marked = (plain: string) => RESENT_MARKS.some((mark) => plain.includes(mark));

/** Times the chat's messages containing `text` were sent: first sends and marked resends. */
export function sendsOf(world: World, chatId: number, text: string): Sends {
  const records = world.telegram.sent(chatId).filter((r) => r.kind === "sent" && r.plainText.includes(text));
  return {
    first: records.filter((r) => !marked(r.plainText)).map((r) => r.time),
    resent: records.filter((r) => marked(r.plainText)).map((r) => r.time),
  };
}

/** Messages the chat was sent twice (see `sentTwice`), each named by its first line. */
export function repeatedTexts(world: World, chatId: number): string[] {
  const byText = new Map<string, Sends>();
  for (const record of world.telegram.sent(chatId)) {
    if (record.kind !== "sent") continue;
    const resent = marked(record.plainText);
    // The mark is a line of its own ahead of the message.
    const text = resent ? record.plainText.slice(record.plainText.indexOf("\n") + 1) : record.plainText;
    const sends = byText.get(text) ?? { first: [], resent: [] };
    (resent ? sends.resent : sends.first).push(record.time);
    byText.set(text, sends);
  }
  return [...byText].filter(([, sends]) => sentTwice(sends)).map(([text]) => text.split("\n")[0]!);
}

/**
 * A must-deliver message sent once more WITH the visible mark is the specified answer to a send
 * that may or may not have arrived; an unmarked repeat, or a second resend, is a duplicate.
 */
export function sentTwice({ first, resent }: Sends): boolean {
  return first.length > 1 || resent.length > 1;
}

/** When the chat first saw a message containing `text` (a marked resend counts). */
export function firstSeen(world: World, chatId: number, text: string): number | undefined {
  const { first, resent } = sendsOf(world, chatId, text);
  const times = [...first, ...resent];
  return times.length === 0 ? undefined : Math.min(...times);
}

/** The person wrote `mark` in chat `chatId` and waits for the analyst's question, once. */
export function dialogueProbe(world: World, chatId: number, mark: string): Probe {
  const question = questionFor(mark);
  return {
    mark,
    answeredAt: () => firstSeen(world, chatId, question),
    async judge() {
      const { prisma } = world.db;
      const judgement: Judgement = { answeredAt: firstSeen(world, chatId, question) };
      const turns = await prisma.dialogueTurn.count({ where: { role: "user", text: { contains: mark } } });
      judgement.lost = `(chat ${chatId}) ${turns} turn(s) stored`;
      const sends = sendsOf(world, chatId, question);
      if (sentTwice(sends) || turns > 1)
        judgement.duplicated = `answered ${sends.first.length} + ${sends.resent.length} resent time(s), stored as ${turns} turns`;
      else if (sends.resent.length === 1)
        judgement.note = "answered once more marked (resent) after a doubtful send";
      const tasks = await prisma.task.findMany({ where: { chatId: BigInt(chatId) } });
      const pending = await prisma.notification.count({
        where: { chatId: BigInt(chatId), status: { in: ["pending", "sending"] } },
      });
      const busy = tasks.filter((t) => t.analysing || t.pendingTurns > 0);
      if (busy.length > 0 || pending > 0) {
        const states = busy.map(
          (t) => `#${t.id} ${t.status} analysing=${t.analysing} pending=${t.pendingTurns}`,
        );
        judgement.stuck = [...states, `${pending} reply(ies) unsent`].join(", ");
      }
      return judgement;
    },
  };
}

/** Waits until every probe is answered or the deadline passes. */
export async function waitForAnswers(probes: readonly Probe[], deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (probes.every((p) => p.answeredAt() !== undefined)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Judges every probe and sums what the people saw. */
export async function measure(probes: readonly Probe[]): Promise<ProbeOutcome> {
  const outcome: ProbeOutcome = {
    probes: probes.length,
    lost: 0,
    duplicated: 0,
    stuck: 0,
    lastAnsweredAt: undefined,
    details: [],
  };
  for (const probe of probes) {
    const judgement = await probe.judge();
    if (judgement.answeredAt === undefined) {
      outcome.lost += 1;
      outcome.details.push(`${probe.mark}: never answered${judgement.lost ? `; ${judgement.lost}` : ""}`);
    } else outcome.lastAnsweredAt = Math.max(outcome.lastAnsweredAt ?? 0, judgement.answeredAt);
    if (judgement.duplicated) {
      outcome.duplicated += 1;
      outcome.details.push(`${probe.mark}: ${judgement.duplicated}`);
    }
    if (judgement.stuck) {
      outcome.stuck += 1;
      outcome.details.push(`${probe.mark}: stuck: ${judgement.stuck}`);
    }
    if (judgement.note) outcome.details.push(`${probe.mark}: ${judgement.note}`);
  }
  return outcome;
}
