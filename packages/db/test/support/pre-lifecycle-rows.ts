import type { TaskEvent } from "@ratatoskr/contracts";
import { giteaTargetKey, type Prisma, type PrismaClient } from "@ratatoskr/db";

/**
 * Tasks as the releases before migration `one_lifecycle` wrote them — two lifecycles, Gitea's
 * `succeeded` and `command.*` pipeline events — in every status of both doors, with the outbox
 * rows (follow-ups, notifications) the old reducer left pending: read from
 * `git show e59df65^:packages/contracts/src/state-machine/`. Each case also says what the row must
 * be after the upgrade and which events the task would get next from today's code.
 */

/** A follow-up the old reducer wrote, named `<taskId>-<step>-<version>` as it named them. */
type OldJob = (taskId: number, version: number) => { queue: string; jobId: string; data: Prisma.InputJsonObject };

const job =
  (queue: string, step: string, data: (taskId: number) => Prisma.InputJsonObject): OldJob =>
  (taskId, version) => ({ queue, jobId: `${taskId}-${step}-${version}`, data: data(taskId) });

const dev = (kind: string, round: number) => job("dev", "dev", (taskId) => ({ v: 1, taskId, kind, round }));
const review = (kind: string, round: number) => job("review", "review", (taskId) => ({ v: 1, taskId, kind, round }));
const analyst = (kind: string) => job("analyst", "analyst", (taskId) => ({ v: 1, taskId, kind }));
const postmortem = (cause: string) => job("postmortem", "postmortem", (taskId) => ({ v: 1, taskId, cause }));
const publish = job("intake", "publish", (taskId) => ({ v: 1, kind: "publish", taskId }));
/** Stored by the webhook's inbox, not by a transition: version 0. */
const routeCommand = job("intake", "route", (taskId) => ({ v: 1, kind: "route-command", taskId }));

export interface OldStep {
  type: string;
  payload?: Prisma.InputJsonObject;
  to: string;
  jobs?: OldJob[];
  /** The Telegram message the old transition stored (a Gitea one always refreshed the status comment). */
  notice?: string;
}

/** What today's code sends a migrated task next, the status it leads to and the jobs it asks for (`queue:kind`). */
export interface NextEvent {
  event: TaskEvent;
  status: string;
  jobs: string[];
}

export interface UpgradeCase {
  name: string;
  door: "telegram" | "gitea";
  /** Columns besides status and version (those follow from the history). */
  row: Partial<Prisma.TaskUncheckedCreateInput>;
  history: OldStep[];
  /** Follow-ups pending beside the history's own (a stored command's route job). */
  pending?: OldJob[];
  after: { status: string; round: number; pausedStep?: string; stage?: "dev" | "review" | "intake" };
  /** Empty for a task that has ended. */
  next: NextEvent[];
}

const FINDING = { severity: "major" as const, file: "cart.txt", line: 1, text: "the total must include tax" };

// The Telegram dialogue up to a running first dev round.
const TURN: OldStep = { type: "turn.received", to: "collecting", jobs: [analyst("turn")] };
const DRAFTED: OldStep = { type: "analyst.drafted", payload: { consumedTurns: 1, forced: false }, to: "ready", notice: "task.draft-ready" };
const APPROVED: OldStep = { type: "user.approved", to: "approved", jobs: [dev("implement", 1)], notice: "task.approved" };
const RUNNING: OldStep[] = [TURN, DRAFTED, APPROVED, { type: "dev.started", to: "running", notice: "task.running" }];
const devFinished = (round: number): OldStep => ({ type: "dev.finished", payload: { commit: "abc1234" }, to: "running", jobs: [review("diff", round)], notice: "task.dev-to-review" });

// A Gitea command: authorized into its issue's line, started, and the old `command.*` pipeline events.
const authorized = (key: string): OldStep => ({ type: "command.authorized", payload: { budgetUsd: null }, to: "queued", jobs: [dispatch(key)] });
const started = (first: OldJob): OldStep => ({ type: "command.started", to: "running", jobs: [first] });
const DEV_FINISHED: OldStep = { type: "command.dev-finished", payload: { commit: "def5678", summary: "did it", testsRun: "npm test" }, to: "running", jobs: [review("diff", 1)] };
const REVIEW_PASSED: OldStep = { type: "command.review-passed", payload: { minor: [] }, to: "running", jobs: [publish] };
function dispatch(targetKey: string): OldJob {
  return job("intake", "dispatch", () => ({ v: 1, kind: "dispatch-next", targetKey }));
}

const telegram = (name: string, history: OldStep[], row: UpgradeCase["row"], after: UpgradeCase["after"], next: NextEvent[] = []): UpgradeCase => ({
  name,
  door: "telegram",
  row: { chatId: 4100, userId: 7, locale: "en", maxTurns: 5, maxRounds: 3, title: name, repos: ["acme/shop"], ...row },
  history,
  after,
  next,
});

let comments = 9000;
function gitea(name: string, issue: number, kind: string, history: (key: string) => OldStep[], rest: Omit<UpgradeCase, "name" | "door" | "row" | "history"> & { row?: UpgradeCase["row"] }): UpgradeCase {
  const key = giteaTargetKey("acme", "shop", issue);
  const row = { repoOwner: "acme", repoName: "shop", targetType: "issue", targetNumber: issue, targetKey: key, commandKind: kind };
  return { name, door: "gitea", ...rest, row: { ...row, requesterLogin: "alice", commentId: ++comments, maxTurns: 0, maxRounds: 3, ...rest.row }, history: history(key) };
}

const failedBySweep: NextEvent = { event: { type: "run.failed", reason: "the step's job was lost" }, status: "failed", jobs: ["postmortem:failed"] };
/** A command leaving the pipeline frees its issue's line too. */
const commandFailedBySweep: NextEvent = { ...failedBySweep, jobs: ["postmortem:failed", "intake:dispatch-next"] };

export const UPGRADE_CASES: UpgradeCase[] = [
  telegram("telegram draft", [], {}, { status: "draft", round: 0 }, [{ event: { type: "turn.received" }, status: "collecting", jobs: ["analyst:turn"] }]),
  telegram("telegram dialogue analysing", [TURN], { pendingTurns: 1, analysing: true }, { status: "collecting", round: 0 }, [
    { event: { type: "analyst.drafted", consumedTurns: 1, forced: false }, status: "ready", jobs: [] },
  ]),
  telegram("telegram draft ready", [TURN, DRAFTED], { turnCount: 1 }, { status: "ready", round: 0 }, [
    { event: { type: "user.approved" }, status: "approved", jobs: ["dev:implement"] },
  ]),
  telegram("telegram approved, its dev job waiting", [TURN, DRAFTED, APPROVED], { turnCount: 1, round: 1 }, { status: "approved", round: 1, stage: "dev" }, [
    { event: { type: "dev.started" }, status: "running", jobs: [] },
    failedBySweep,
  ]),
  telegram("telegram mid dev round 2", [...RUNNING, devFinished(1), { type: "review.rejected", payload: { findings: [FINDING] }, to: "running", jobs: [dev("revise", 2)], notice: "task.review-to-dev" }], { turnCount: 1, round: 2 }, { status: "running", round: 2, stage: "dev" }, [
    { event: { type: "dev.finished", commit: "bcd2345" }, status: "running", jobs: ["review:diff"] },
    failedBySweep,
  ]),
  telegram("telegram mid review", [...RUNNING, devFinished(1)], { turnCount: 1, round: 1 }, { status: "running", round: 1, stage: "review" }, [
    { event: { type: "review.passed", branch: "ratatoskr/1-x", commit: "abc1234" }, status: "success", jobs: [] },
    { event: { type: "review.rejected", findings: [FINDING] }, status: "running", jobs: ["dev:revise"] },
  ]),
  telegram(
    "telegram paused by its budget",
    [...RUNNING, { type: "dev.finished", payload: { commit: "abc1234", overBudget: { spentUsd: 1.2, budgetUsd: 1 } }, to: "paused", notice: "task.budget-exceeded" }],
    { turnCount: 1, round: 1, budgetUsd: 1, pausedStep: "review" },
    { status: "paused", round: 1, pausedStep: "review" },
    [
      { event: { type: "user.budget-extended", budgetUsd: 2 }, status: "running", jobs: ["review:diff"] },
      { event: { type: "user.budget-stopped" }, status: "cancelled", jobs: [] },
    ],
  ),
  telegram("telegram timed out", [...RUNNING, { type: "run.timed_out", to: "timeout", jobs: [postmortem("timeout")], notice: "task.timeout" }], { turnCount: 1, round: 1 }, { status: "timeout", round: 1 }, [
    { event: { type: "user.continued" }, status: "approved", jobs: ["dev:continue"] },
  ]),
  telegram("telegram failed", [...RUNNING, devFinished(1), { type: "run.failed", payload: { reason: "the push was rejected" }, to: "failed", jobs: [postmortem("failed")], notice: "task.failed" }], { turnCount: 1, round: 1 }, { status: "failed", round: 1 }, [
    { event: { type: "user.retried" }, status: "approved", jobs: ["dev:implement"] },
    { event: { type: "user.continued" }, status: "approved", jobs: ["dev:continue"] },
  ]),
  telegram("telegram done", [...RUNNING, devFinished(1), { type: "review.passed", payload: { branch: "ratatoskr/1-x", commit: "abc1234" }, to: "success", notice: "task.success" }], { turnCount: 1, round: 1 }, { status: "success", round: 1 }),
  telegram("telegram cancelled", [...RUNNING, { type: "user.cancelled", to: "cancelled", notice: "task.cancelled" }], { turnCount: 1, round: 1 }, { status: "cancelled", round: 1 }),
  telegram("telegram aborted", [TURN, { type: "analyst.aborted", payload: { reason: "not code" }, to: "aborted", notice: "task.aborted" }], {}, { status: "aborted", round: 0 }),

  gitea("gitea command stored", 19, "implement", () => [], {
    pending: [routeCommand],
    after: { status: "received", round: 0 },
    next: [{ event: { type: "command.authorized", budgetUsd: null }, status: "queued", jobs: ["intake:dispatch-next"] }],
  }),
  gitea("gitea implement mid dev round 1", 20, "implement", (key) => [authorized(key), started(dev("implement", 1))], {
    row: { round: 1 },
    after: { status: "running", round: 1, stage: "dev" },
    next: [{ event: { type: "dev.finished", commit: "def5678", summary: "did it" }, status: "running", jobs: ["review:diff"] }, commandFailedBySweep],
  }),
  gitea("gitea implement queued behind it", 20, "implement", (key) => [authorized(key)], {
    after: { status: "queued", round: 0 },
    next: [{ event: { type: "command.started" }, status: "running", jobs: ["dev:implement"] }],
  }),
  gitea("gitea implement mid review", 21, "implement", (key) => [authorized(key), started(dev("implement", 1)), DEV_FINISHED], {
    row: { round: 1 },
    after: { status: "running", round: 1, stage: "review" },
    next: [{ event: { type: "review.rejected", findings: [FINDING] }, status: "running", jobs: ["dev:revise"] }, commandFailedBySweep],
  }),
  gitea("gitea implement publishing its PR", 22, "implement", (key) => [authorized(key), started(dev("implement", 1)), DEV_FINISHED, REVIEW_PASSED], {
    row: { round: 1 },
    after: { status: "running", round: 1, stage: "intake" },
    next: [{ event: { type: "run.succeeded" }, status: "success", jobs: ["intake:dispatch-next"] }],
  }),
  gitea("gitea plan under review", 23, "plan", (key) => [authorized(key), started(analyst("plan")), { type: "command.plan-drafted", payload: { plan: "1. add it" }, to: "running", jobs: [review("plan", 1)] }], {
    row: { round: 1 },
    after: { status: "running", round: 1, stage: "review" },
    next: [{ event: { type: "review.passed", minor: [] }, status: "running", jobs: ["intake:publish"] }],
  }),
  gitea(
    "gitea implement paused by its budget",
    24,
    "implement",
    (key) => [
      authorized(key),
      started(dev("implement", 1)),
      DEV_FINISHED,
      { type: "command.review-rejected", payload: { findings: [FINDING] }, to: "running", jobs: [dev("revise", 2)] },
      { type: "budget.exceeded", payload: { spentUsd: 1.2, budgetUsd: 1, step: "revise" }, to: "paused" },
    ],
    {
      row: { round: 2, budgetUsd: 1, pausedStep: "revise" },
      after: { status: "paused", round: 2, pausedStep: "revise" },
      next: [
        { event: { type: "user.budget-extended", budgetUsd: 2 }, status: "running", jobs: ["dev:revise"] },
        { event: { type: "user.budget-stopped" }, status: "cancelled", jobs: ["intake:dispatch-next"] },
      ],
    },
  ),
  gitea("gitea implement timed out", 25, "implement", (key) => [authorized(key), started(dev("implement", 1)), { type: "run.timed_out", to: "timeout", jobs: [dispatch(key), postmortem("timeout")] }], {
    row: { round: 1 },
    after: { status: "timeout", round: 1 },
    next: [{ event: { type: "user.continued" }, status: "queued", jobs: ["intake:dispatch-next"] }],
  }),
  gitea(
    "gitea timed-out implement continued, back in line",
    32,
    "implement",
    (key) => [authorized(key), started(dev("implement", 1)), { type: "run.timed_out", to: "timeout", jobs: [dispatch(key)] }, { type: "user.continued", to: "queued", jobs: [dispatch(key)] }],
    { row: { round: 1 }, after: { status: "queued", round: 1 }, next: [{ event: { type: "command.started" }, status: "running", jobs: ["dev:continue"] }] },
  ),
  gitea(
    "gitea plan done",
    26,
    "plan",
    (key) => [authorized(key), started(analyst("plan")), { type: "command.plan-drafted", payload: { plan: "1. write greeting.txt" }, to: "running", jobs: [review("plan", 1)] }, REVIEW_PASSED, { type: "command.succeeded", to: "succeeded", jobs: [dispatch(key)] }],
    { row: { round: 1 }, after: { status: "success", round: 1 }, next: [] },
  ),
  gitea("gitea implement failed", 27, "implement", (key) => [authorized(key), started(dev("implement", 1)), DEV_FINISHED, { type: "command.failed", payload: { reason: "review" }, to: "failed", jobs: [dispatch(key), postmortem("failed")] }], {
    row: { round: 1, failureReason: "the reviewer could not finish (round 1): opencode unavailable" },
    after: { status: "failed", round: 1 },
    next: [],
  }),
  gitea("gitea implement interrupted by a restart", 28, "implement", (key) => [authorized(key), started(dev("implement", 1)), { type: "command.interrupted", to: "failed", jobs: [dispatch(key), postmortem("failed")] }], {
    row: { round: 1, failureReason: "the service running this command stopped mid-turn (restart or crash); the turn is not replayed — comment the command again to retry" },
    after: { status: "failed", round: 1 },
    next: [],
  }),
  gitea("gitea implement cancelled", 29, "implement", (key) => [authorized(key), started(dev("implement", 1)), { type: "command.cancelled", to: "cancelled", jobs: [dispatch(key)] }], {
    row: { round: 1, failureReason: "cancelled by @alice with `/agent cancel` (#3)" },
    after: { status: "cancelled", round: 1 },
    next: [],
  }),
  gitea("gitea command rejected", 30, "implement", () => [{ type: "command.rejected", payload: { reason: "refused" }, to: "rejected" }], {
    row: { failureReason: "@rita has read permission on acme/shop; write, admin or owner is needed" },
    after: { status: "rejected", round: 0 },
    next: [],
  }),
  gitea("gitea /agent status answered", 31, "status", () => [{ type: "command.answered", to: "succeeded" }], { after: { status: "success", round: 0 }, next: [] }),
];

/**
 * Writes one case as the old release did: the task row, its events, and its follow-ups — those
 * of its last transition (and `pending`) not yet dispatched. Every old transition of a Telegram
 * task told its chat a v1 `message` job without the chat (the older shape), every Gitea one
 * refreshed the status comment; only the last one's is still pending. Returns the task's id.
 */
export async function writeOldRows(prisma: PrismaClient, c: UpgradeCase): Promise<number> {
  const initial = c.door === "telegram" ? "draft" : "received";
  const status = c.history.at(-1)?.to ?? initial;
  // Only what the old release had: today's client would read back columns added since.
  const task = await prisma.task.create({
    data: { maxTurns: 0, maxRounds: 3, ...c.row, source: c.door, status, version: c.history.length } as Prisma.TaskUncheckedCreateInput,
    select: { id: true, chatId: true },
  });
  let from = initial;
  for (const [index, step] of c.history.entries()) {
    const version = index + 1;
    const dispatchedAt = version === c.history.length ? null : new Date();
    await prisma.taskEvent.create({
      data: { taskId: task.id, version, type: step.type, payload: { type: step.type, ...step.payload }, fromStatus: from, toStatus: step.to },
    });
    const jobs = (step.jobs ?? []).map((j) => j(task.id, version));
    const template = c.door === "gitea" ? "command.status" : step.notice;
    if (template) {
      const sent = dispatchedAt ? { status: "sent" } : {};
      const notice = await prisma.notification.create({
        data: { taskId: task.id, channel: c.door, chatId: task.chatId, template, params: c.door === "gitea" ? {} : { taskId: task.id }, ...sent },
      });
      const data = c.door === "gitea" ? { v: 1, kind: "gitea-status", taskId: task.id } : { v: 1, kind: "message", notificationId: notice.id };
      jobs.push({ queue: "notify", jobId: `${task.id}-notify-${version}`, data });
    }
    await prisma.followUp.createMany({ data: jobs.map((j) => ({ taskId: task.id, ...j, dispatchedAt })) });
    from = step.to;
  }
  const pending = (c.pending ?? []).map((j) => j(task.id, 0));
  if (pending.length > 0) await prisma.followUp.createMany({ data: pending.map((j) => ({ taskId: task.id, ...j })) });
  return task.id;
}
