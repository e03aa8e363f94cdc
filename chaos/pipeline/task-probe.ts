import { firstSeen, repeatedTexts } from "../probes.ts";
import { until, type RoundContext } from "../trial.ts";
import {
  armAndScript,
  judgeTask,
  probeRepo,
  type Arm,
  type PipelineProbe,
  type Target,
} from "./pipeline-probe.ts";
import type { Plan } from "./script.ts";

/** What the person waits for at the end: the success message, or the postmortem's analysis. */
export const TELEGRAM_ANSWER: Record<Plan, string> = {
  success: "is done: the reviewer approved",
  failure: "Analysis of task #",
};
/** The line under a complete draft, asking for the approval. */
const DRAFT_SHOWN = "Approve it";
const DRAFT_DEADLINE_MS = 120_000;

/**
 * A person on Telegram asks for the probe's work, is shown the analyst's draft and approves it:
 * from then on the pipeline. Resolves once the approval is sent.
 */
export async function startTaskProbe(ctx: RoundContext, plan: Plan, arm: Arm): Promise<PipelineProbe> {
  const { world, model } = ctx;
  const { script, bare } = await probeRepo(ctx, plan, true);
  const chatId = ctx.nextChat();
  const target: Target = {
    door: "telegram",
    script,
    bare,
    chatId,
    task: () => world.db.prisma.task.findFirst({ where: { chatId: BigInt(chatId) }, orderBy: { id: "asc" } }),
  };
  const { moment, paid } = await armAndScript(ctx, target, arm);
  world.telegram.sendText(chatId, `Please build ${script.mark}`);
  const drafted = () => world.telegram.sent(chatId).some((r) => r.plainText.includes(DRAFT_SHOWN));
  await until(`the draft of ${script.mark} is shown`, drafted, DRAFT_DEADLINE_MS);
  world.telegram.sendText(chatId, "go");
  const answeredAt = () => firstSeen(world, chatId, TELEGRAM_ANSWER[plan]);
  return {
    mark: script.mark,
    moment,
    answeredAt,
    judge: () =>
      judgeTask(world, model, target, paid, async (task) => {
        const where = { taskId: task.id, status: { in: ["pending", "sending"] } };
        const unsent = await world.db.prisma.notification.count({ where });
        return {
          answeredAt: answeredAt(),
          duplicated: repeatedTexts(world, chatId).map((text) => `told twice: “${text}”`),
          unsent: unsent > 0 ? [`${unsent} message(s) unsent`] : [],
        };
      }),
  };
}
