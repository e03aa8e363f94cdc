import { until, type RoundContext, type Trial } from "../trial.ts";
import type { ServiceName, World } from "../world.ts";
import { startCommandProbe } from "./command-probe.ts";
import { afterMessage, afterPullRequest, afterPush, devMidRun, runFinished } from "./moments.ts";
import type { Arm, Door, Moment, PipelineProbe } from "./pipeline-probe.ts";
import type { Plan } from "./script.ts";
import { startTaskProbe } from "./task-probe.ts";

const START: Record<Door, (ctx: RoundContext, plan: Plan, arm: Arm) => Promise<PipelineProbe>> = {
  telegram: startTaskProbe,
  gitea: startCommandProbe,
};
const BOTH: readonly Door[] = ["telegram", "gitea"];

interface PipelineTrialSpec {
  name: string;
  fault: string;
  /** The service killed at each probe's moment. */
  service: ServiceName;
  plan: Plan;
  doors: readonly Door[];
  arm: Arm;
}

/**
 * kill -9 `service` as soon as a probe is at its moment (probes there together share one kill),
 * lets the held effects go while it is down, and starts it again; until every probe had its
 * moment. Returns when the last kill was.
 */
async function killAtMoments(
  world: World,
  service: ServiceName,
  moments: readonly Moment[],
): Promise<number> {
  let waiting = moments.map((moment) => {
    const state = { moment, reached: false, settled: moment.reached.then(() => void (state.reached = true)) };
    return state;
  });
  let killedAt = Date.now();
  while (waiting.length > 0) {
    await Promise.race(waiting.map((s) => s.settled));
    const hit = waiting.filter((s) => s.reached);
    waiting = waiting.filter((s) => !s.reached);
    await world.kill(service);
    killedAt = Date.now();
    await Promise.all(hit.map((s) => s.moment.release()));
    await world.start(service);
  }
  return killedAt;
}

/** One probe per door a round, each killed at its worst moment. */
function pipelineTrial(spec: PipelineTrialSpec): Trial {
  return {
    name: spec.name,
    fault: spec.fault,
    world: { pipeline: true },
    // A retry waits out the dead worker's lock (15 s), then the rest of the pipeline runs.
    answerDeadlineMs: 150_000,
    settleMs: 8_000,
    async round(ctx) {
      const armed: Moment[] = [];
      const arm: Arm = async (target, c) => {
        const result = await spec.arm(target, c);
        if (result.moment) {
          armed.push(result.moment);
          result.moment.reached.catch(() => undefined);
        }
        return result;
      };
      try {
        const started = await Promise.allSettled(spec.doors.map((door) => START[door](ctx, spec.plan, arm)));
        const failed = started.find((s) => s.status === "rejected");
        if (failed) throw failed.reason;
        const probes = started.map((s) => (s as PromiseFulfilledResult<PipelineProbe>).value);
        return { probes, healedAt: await killAtMoments(ctx.world, spec.service, armed) };
      } finally {
        await Promise.allSettled(armed.map((moment) => moment.release()));
      }
    },
  };
}

/**
 * The work is done while what delivers it is down: the reviewer's verdict waits (held) until
 * ingress and the notifier are killed, then is recorded, and its delivery jobs (a command's
 * publish, the messages and status comments) wait in Redis for them; Redis is wiped, and they
 * start again. Only Postgres knows what is left to deliver: the sweeps must find it, once.
 */
function redisWipedBeforeDelivery(): Trial {
  return {
    name: "redis-wiped-before-delivery",
    fault: "work done, ingress and notifier down, FLUSHALL",
    world: { pipeline: true },
    // The sweeps' grace (30 s) and the notifier's unqueued-message pass (60 s) come first.
    answerDeadlineMs: 180_000,
    settleMs: 8_000,
    async round(ctx) {
      const armed: Array<{ moment: Moment; task: () => Promise<{ id: number } | null> }> = [];
      const arm: Arm = async (target, c) => {
        const result = await runFinished("reviewer")(target, c);
        if (result.moment) {
          armed.push({ moment: result.moment, task: target.task });
          result.moment.reached.catch(() => undefined);
        }
        return result;
      };
      try {
        const probes = await Promise.all(BOTH.map((door) => START[door](ctx, "success", arm)));
        await Promise.all(armed.map((a) => a.moment.reached));
        await Promise.all([ctx.world.kill("ingress"), ctx.world.kill("notifier")]);
        const releasedAt = new Date();
        await Promise.all(armed.map((a) => a.moment.release()));
        const taskIds = (await Promise.all(armed.map((a) => a.task()))).map((t) => t!.id);
        // Every verdict recorded and its follow-ups put on their queues, where nobody takes them.
        await until("the verdicts' delivery jobs wait in Redis", async () => {
          const queued = await ctx.world.db.prisma.followUp.findMany({
            where: { taskId: { in: taskIds }, createdAt: { gte: releasedAt }, queue: { in: ["intake", "notify"] } },
          });
          return taskIds.every((id) => queued.some((f) => f.taskId === id)) && queued.every((f) => f.dispatchedAt !== null);
        });
        await ctx.world.redis.wipe();
        await Promise.all([ctx.world.start("ingress"), ctx.world.start("notifier")]);
        return { probes, healedAt: Date.now() };
      } finally {
        await Promise.allSettled(armed.map((a) => a.moment.release()));
      }
    },
  };
}

/** Trials on the pipeline after approval, on both doors, each kill right after an outside effect. */
export const PIPELINE_TRIALS: Trial[] = [
  redisWipedBeforeDelivery(),
  pipelineTrial({
    name: "dev-killed-after-push",
    fault: "kill -9 dev once its push reached the remote",
    service: "dev",
    plan: "success",
    doors: BOTH,
    arm: afterPush,
  }),
  pipelineTrial({
    name: "dev-killed-mid-run",
    fault: "kill -9 dev while the model answers",
    service: "dev",
    plan: "success",
    doors: BOTH,
    arm: devMidRun,
  }),
  pipelineTrial({
    name: "reviewer-killed-after-run",
    fault: "kill -9 reviewer, run done, verdict unrecorded",
    service: "reviewer",
    plan: "success",
    doors: BOTH,
    arm: runFinished("reviewer"),
  }),
  pipelineTrial({
    name: "postmortem-killed-after-run",
    fault: "kill -9 postmortem, run done, unrecorded",
    service: "postmortem",
    plan: "failure",
    doors: BOTH,
    arm: runFinished("postmortem"),
  }),
  pipelineTrial({
    name: "ingress-killed-after-pr",
    fault: "kill -9 ingress once Gitea opened the PR",
    service: "ingress",
    plan: "success",
    doors: ["gitea"],
    arm: afterPullRequest,
  }),
  pipelineTrial({
    name: "notifier-killed-after-send",
    fault: "kill -9 notifier once Telegram/Gitea took a message",
    service: "notifier",
    plan: "success",
    doors: BOTH,
    arm: afterMessage,
  }),
];
