import { reply, type ModelRequest, type ScriptedModel, type ScriptTurn } from "@ratatoskr/testkit";

/** A phrase of each agent's system prompt (agents/*.md): who a model call is from. */
export const AGENTS = {
  analyst: "You are the analyst of Ratatoskr",
  dev: "You are the developer agent of Ratatoskr",
  reviewer: "You are the reviewer agent of Ratatoskr",
  postmortem: "You are the postmortem analyst of Ratatoskr",
} as const;
export type Agent = keyof typeof AGENTS;

/**
 * What a probe's request comes to: `success` — the dev writes a file, it is pushed and the review
 * passes; `failure` — the dev changes nothing, the task fails and the postmortem explains it.
 */
export type Plan = "success" | "failure";

/** Answers held back until a trial lets them go: the last answer of each agent's run. */
export type Holds = Partial<Record<"dev" | "reviewer" | "postmortem", Promise<unknown>>>;

/** Model calls a probe's agents complete when nothing goes wrong: what it is paid for, once. */
export type Paid = Record<Agent, number>;

export interface PipelineScript {
  mark: string;
  /** `owner/name` the dev writes in. */
  repo: string;
  plan: Plan;
  /** Telegram: the request reaches the pipeline through the analyst's draft. */
  drafted: boolean;
}

/** The title of the probe's task or issue: every agent's prompt carries it, and so the mark. */
export const titleOf = (mark: string) => `Build ${mark}`;

/** The draft the analyst proposes for the probe: complete, so the person can approve it at once. */
export function draftOf(script: PipelineScript) {
  return {
    title: titleOf(script.mark),
    goal: `Add done.txt to ${script.repo}.`,
    repos: [script.repo],
    why: "A chaos probe needs it.",
    acceptanceCriteria: ["done.txt is on the branch"],
  };
}

const ruleName = (mark: string, agent: Agent) => `${mark} ${agent}`;

/** The turn a hold sits on: the last one of the agent's rule. */
const HELD_TURN: Record<Plan, Record<keyof Holds, number>> = {
  success: { dev: 1, reviewer: 0, postmortem: 0 },
  failure: { dev: 0, reviewer: 0, postmortem: 0 },
};

/** Whether `req` is the call whose answer a hold on `agent` keeps back. */
export const isHeldCall = (req: ModelRequest, script: PipelineScript, agent: keyof Holds) =>
  req.answeredBy === ruleName(script.mark, agent) && req.turnIndex === HELD_TURN[script.plan][agent];

/**
 * Teaches the model the probe's pipeline and returns what it is paid for. A dev run cut short and
 * resumed in its session is told to finish (the resumed rule): the aborted call was never
 * answered, so a resumed round costs what an undisturbed one does. A run started afresh would
 * find its rule's turns again and pay twice.
 */
export function scriptPipeline(model: ScriptedModel, script: PipelineScript, holds: Holds): Paid {
  const { mark, repo, plan } = script;
  const about = (agent: Agent) => ({ systemIncludes: AGENTS[agent], promptIncludes: mark });
  const rule = (agent: Agent, turns: ScriptTurn[], name = ruleName(mark, agent)) =>
    model.addRule({ name, match: about(agent), reply: turns });
  const answer = (value: unknown, hold?: Promise<unknown>) =>
    reply.json(value, hold ? { holdUntil: hold } : {});
  if (script.drafted) rule("analyst", [answer({ phase: "propose", draft: draftOf(script) })]);
  if (plan === "success") {
    const done = { summary: "added done.txt", done: true };
    rule("dev", [reply.write(`${repo}/done.txt`, `${mark}\n`), answer(done, holds.dev)]);
    rule("dev", [answer(done)], `${ruleName(mark, "dev")} resumed`);
    rule("reviewer", [answer({ passed: true, summary: "fine", findings: [] }, holds.reviewer)]);
  } else {
    rule("dev", [answer({ summary: "nothing needed changing", done: true }, holds.dev)]);
    const cause = {
      cause: `nothing in ${mark} needed changing`,
      nextSteps: ["Say which file should change"],
    };
    rule("postmortem", [answer(cause, holds.postmortem)]);
  }
  const analyst = script.drafted ? 1 : 0;
  return plan === "success"
    ? { analyst, dev: 2, reviewer: 1, postmortem: 0 }
    : { analyst, dev: 1, reviewer: 0, postmortem: 1 };
}

/** Model calls about `mark` each agent completed (an aborted call was never answered). */
export function paidCalls(model: ScriptedModel, mark: string): Paid {
  const paid: Paid = { analyst: 0, dev: 0, reviewer: 0, postmortem: 0 };
  for (const req of model.requests) {
    if (req.aborted || req.endedAt === undefined || !req.userTexts.some((t) => t.includes(mark))) continue;
    const agent = (Object.keys(AGENTS) as Agent[]).find((a) => req.system.includes(AGENTS[a]));
    if (agent) paid[agent] += 1;
  }
  return paid;
}
