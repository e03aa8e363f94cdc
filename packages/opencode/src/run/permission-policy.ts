import type { PermissionRequest, QuestionRequest } from "../api/api-schemas.ts";

export type PermissionEffect = "allow" | "deny";

/** How a headless run answers the agent's permission requests and questions. */
export interface AgentPolicy {
  /** Per opencode action (`bash`, `edit`, `external_directory`, `webfetch`, …). Missing → `default`. */
  permissions?: Record<string, PermissionEffect>;
  /** Effect for actions not listed; deny unless said otherwise. */
  default?: PermissionEffect;
  /**
   * Answers to the agent's questions (one array of chosen labels or free text per question);
   * return undefined to reject (which stops the turn: the run fails with HaltedTurnError). A throw
   * fails the run with QuestionPolicyError. Default: every question is answered with
   * NO_PERSON_ANSWER, so the agent decides and states its assumption.
   */
  answerQuestion?: (request: QuestionRequest) => string[][] | undefined;
}

/** The default answer to an agent's question in a headless run. */
export const NO_PERSON_ANSWER = "No person is available to answer. Decide yourself and state your assumption in your answer.";

export function defaultAnswers(request: QuestionRequest): string[][] {
  return request.questions.map(() => [NO_PERSON_ANSWER]);
}

export interface PermissionDecision {
  reply: "once" | "reject";
  message: string;
}

export function decidePermission(policy: AgentPolicy, request: PermissionRequest): PermissionDecision {
  // Asking a question is allowed unless the policy names it: the question itself is then answered
  // by `answerQuestion` (default NO_PERSON_ANSWER) instead of failing the agent's tool call.
  const effect = policy.permissions?.[request.action] ?? (request.action === "question" ? "allow" : (policy.default ?? "deny"));
  return effect === "allow"
    ? { reply: "once", message: `allowed by policy (${request.action})` }
    : { reply: "reject", message: `"${request.action}" is not allowed in this headless run; continue without it and explain in your answer.` };
}
