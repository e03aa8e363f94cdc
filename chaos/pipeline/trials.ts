import type { RoundContext, Trial } from "../trial.ts";
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

/** Trials on the pipeline after approval, on both doors, each kill right after an outside effect. */
export const PIPELINE_TRIALS: Trial[] = [
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
