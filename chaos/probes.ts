import { reply, type ScriptedModel } from "@ratatoskr/testkit";
import type { World } from "./world.ts";

/**
 * A probe is one person writing one message in a chat of their own: the analyst asks a question
 * naming the probe's mark, and the person must see that question exactly once.
 */
export interface Probe {
  chatId: number;
  mark: string;
  sentAt: number;
}

export interface ProbeOutcome {
  probes: number;
  /** Never answered. */
  lost: number;
  /** Answered more than once, or its message stored as more than one dialogue turn. */
  duplicated: number;
  /** Tasks left analysing / with turns not analysed, or replies left pending or sending. */
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
 * model's rules and every count find a mark by substring).
 */
export function newMark(trial: string): string {
  sequence += 1;
  return `[${trial}-m${sequence}]`;
}

/** The person writes; the update is queued at the fake Telegram (polling or its webhook). */
export function sendProbe(world: World, model: ScriptedModel, chatId: number, trial: string): Probe {
  const mark = newMark(trial);
  scriptAnswer(model, mark);
  world.telegram.sendText(chatId, `Please build ${mark}`);
  return { chatId, mark, sentAt: Date.now() };
}

/** The notifier's visible mark on a must-deliver message sent once more after a doubtful send (issue 7 item 6). */
const RESENT_MARKS = ["(resent)", "(отправлено повторно)"];

/** Sent records of the probe's chat that carry its question, split into first sends and marked resends. */
function sends(world: World, probe: Probe): { first: number[]; resent: number[] } {
  const question = questionFor(probe.mark);
  const records = world.telegram
    .sent(probe.chatId)
    .filter((r) => r.kind === "sent" && r.plainText.includes(question));
  const marked = (text: string) => RESENT_MARKS.some((mark) => text.includes(mark));
  return {
    first: records.filter((r) => !marked(r.plainText)).map((r) => r.time),
    resent: records.filter((r) => marked(r.plainText)).map((r) => r.time),
  };
}

/** When the probe's question reached the person (a marked resend counts as an answer). */
export function answers(world: World, probe: Probe): number[] {
  const { first, resent } = sends(world, probe);
  return [...first, ...resent].sort((a, b) => a - b);
}

/** Waits until every probe is answered or the deadline passes. */
export async function waitForAnswers(world: World, probes: Probe[], deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (probes.every((p) => answers(world, p).length > 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Counts what the person saw and what the database holds for these probes. */
export async function measure(world: World, probes: Probe[]): Promise<ProbeOutcome> {
  const outcome: ProbeOutcome = {
    probes: probes.length,
    lost: 0,
    duplicated: 0,
    stuck: 0,
    lastAnsweredAt: undefined,
    details: [],
  };
  const { prisma } = world.db;
  for (const probe of probes) {
    const seen = answers(world, probe);
    const turns = await prisma.dialogueTurn.count({
      where: { role: "user", text: { contains: probe.mark } },
    });
    if (seen.length === 0) {
      outcome.lost += 1;
      outcome.details.push(`${probe.mark} (chat ${probe.chatId}): never answered; ${turns} turn(s) stored`);
    } else {
      outcome.lastAnsweredAt = Math.max(outcome.lastAnsweredAt ?? 0, seen[0]!);
    }
    // A must-deliver reply sent once more WITH the visible mark is the specified answer to a send
    // that may or may not have arrived; an unmarked repeat, or a second resend, is a duplicate.
    const { first, resent } = sends(world, probe);
    if (first.length > 1 || resent.length > 1 || turns > 1) {
      outcome.duplicated += 1;
      outcome.details.push(
        `${probe.mark}: answered ${first.length} + ${resent.length} resent time(s), stored as ${turns} turns`,
      );
    } else if (resent.length === 1) {
      outcome.details.push(`${probe.mark}: answered once more marked (resent) after a doubtful send`);
    }
    const tasks = await prisma.task.findMany({ where: { chatId: BigInt(probe.chatId) } });
    const pending = await prisma.notification.count({
      where: { chatId: BigInt(probe.chatId), status: { in: ["pending", "sending"] } },
    });
    const busy = tasks.filter((t) => t.analysing || t.pendingTurns > 0);
    if (busy.length > 0 || pending > 0) {
      outcome.stuck += 1;
      const states = busy.map(
        (t) => `#${t.id} ${t.status} analysing=${t.analysing} pending=${t.pendingTurns}`,
      );
      outcome.details.push(`${probe.mark}: stuck: ${[...states, `${pending} reply(ies) unsent`].join(", ")}`);
    }
  }
  return outcome;
}
