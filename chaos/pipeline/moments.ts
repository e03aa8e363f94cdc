import { holdPushes } from "../../test/support/push-hold.ts";
import { holdTaskRecords, type RecordHold } from "../../test/support/record-hold.ts";
import { firstSeen } from "../probes.ts";
import { until } from "../trial.ts";
import { pullsOf, statusComments } from "./command-probe.ts";
import { gitea, type Arm, type Moment } from "./pipeline-probe.ts";
import { isHeldCall } from "./script.ts";
import { TELEGRAM_ANSWER } from "./task-probe.ts";

/**
 * Where each trial kills: the worst moment of a probe, found by holding the effect once it is made
 * (a push taken, a run finished, a PR or a message created) instead of guessing it with sleeps.
 */
const MOMENT_DEADLINE_MS = 180_000;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A moment whose held answer is `answer`, reached when `made` holds. */
const answerHeld = (what: string, made: () => boolean): { moment: Moment; answer: Promise<void> } => {
  const answer = deferred();
  const reached = until(what, made, MOMENT_DEADLINE_MS);
  return { moment: { reached, release: async () => answer.resolve() }, answer: answer.promise };
};

/** The dev's push reached the remote and waits there for its answer: the dev never learns it landed. */
export const afterPush: Arm = async (target) => {
  const hold = await holdPushes(target.bare);
  return { moment: { reached: hold.taken(MOMENT_DEADLINE_MS), release: () => hold.release() } };
};

/**
 * The dev's run waits on the model's last answer. The dead run's call stays unanswered until the
 * retry hung up on it: the retry meets a run cut mid-turn, not one that finished meanwhile.
 */
export const devMidRun: Arm = async (target, ctx) => {
  const answer = deferred();
  const held = () => ctx.model.requests.find((r) => isHeldCall(r, target.script, "dev"));
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    const call = held();
    if (!call) return answer.resolve();
    void until(`the retry hangs up on ${target.script.mark}'s call`, () => call.aborted, MOMENT_DEADLINE_MS)
      .catch(() => undefined)
      .finally(answer.resolve);
  };
  const reached = until(
    `the dev of ${target.script.mark} waits on the model`,
    () => held() !== undefined,
    MOMENT_DEADLINE_MS,
  );
  return { holds: { dev: answer.promise }, moment: { reached, release } };
};

/**
 * `agent`'s run finished (its trace says completed) and it waits to record its outcome on the
 * task's row, held: the model was paid, the outcome never recorded.
 */
export const runFinished =
  (agent: "reviewer" | "postmortem"): Arm =>
  async (target, ctx) => {
    const { world, model } = ctx;
    const { mark } = target.script;
    const answer = deferred();
    let records: RecordHold | undefined;
    let released = false;
    const reached = (async () => {
      await until(
        `the ${agent} of ${mark} asks the model`,
        () => model.requests.some((r) => isHeldCall(r, target.script, agent)),
        MOMENT_DEADLINE_MS,
      );
      const taskId = (await target.task())!.id;
      records = await holdTaskRecords({ connectionString: world.postgres.url, schema: "public" }, taskId);
      if (released) {
        await records.release();
        throw new Error(`chaos: the ${agent} hold of ${mark} was released before its moment`);
      }
      answer.resolve();
      const traced = async () =>
        (await world.db.prisma.agentTrace.count({ where: { taskId, agent, outcome: "completed" } })) > 0;
      await until(`the ${agent} run of ${mark} is traced`, traced, MOMENT_DEADLINE_MS);
      await records.taken(MOMENT_DEADLINE_MS);
    })();
    const release = async () => {
      if (released) return;
      released = true;
      answer.resolve();
      await records?.release();
    };
    return { holds: { [agent]: answer.promise }, moment: { reached, release } };
  };

/** Gitea created the command's PR; its answer to ingress is held (Gitea door only). */
export const afterPullRequest: Arm = async (target, ctx) => {
  if (target.door !== "gitea") return {};
  const host = gitea(ctx.world);
  const { moment, answer } = answerHeld(
    `a PR of ${target.script.mark} is opened`,
    () => pullsOf(host, target.script).length > 0,
  );
  host.injectFault({
    method: "POST",
    path: new RegExp(`/repos/${target.script.repo}/pulls$`),
    holdAnswerUntil: answer,
  });
  return { moment };
};

/**
 * The notifier's message reached the person, its answer held: on Telegram the message they wait
 * for at the end, on Gitea the command's status comment (created once, then edited).
 */
export const afterMessage: Arm = async (target, ctx) => {
  const { world } = ctx;
  const { mark, repo } = target.script;
  if (target.door === "telegram") {
    const text = TELEGRAM_ANSWER[target.script.plan];
    const chatId = target.chatId!;
    const { moment, answer } = answerHeld(
      `${mark}'s answer reaches the chat`,
      () => firstSeen(world, chatId, text) !== undefined,
    );
    world.proxy.holdSend(chatId, text, answer);
    return { moment };
  }
  const host = gitea(world);
  const issue = target.issue!;
  const { moment, answer } = answerHeld(
    `${mark}'s status comment is created`,
    () => statusComments(host, target.script, issue).length > 0,
  );
  host.injectFault({
    method: "POST",
    path: new RegExp(`/repos/${repo}/issues/${issue}/comments$`),
    holdAnswerUntil: answer,
  });
  return { moment };
};
