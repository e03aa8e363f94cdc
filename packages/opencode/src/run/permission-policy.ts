import type { PermissionRequest, QuestionRequest } from "../api/api-schemas.ts";

export type PermissionEffect = "allow" | "deny";

/** How a headless run answers the agent's permission requests and questions. */
export interface AgentPolicy {
  /** Per opencode action (`bash`, `edit`, `external_directory`, `webfetch`, …). Missing → `default`. */
  permissions?: Record<string, PermissionEffect>;
  /** Effect for actions not listed; deny unless said otherwise. */
  default?: PermissionEffect;
  /**
   * Answers to the agent's questions (one array of chosen labels per question); return undefined
   * to reject. Default: reject every question — nobody is there to answer.
   */
  answerQuestion?: (request: QuestionRequest) => string[][] | undefined;
}

export interface PermissionDecision {
  reply: "once" | "reject";
  message: string;
}

export function decidePermission(policy: AgentPolicy, request: PermissionRequest): PermissionDecision {
  const effect = policy.permissions?.[request.action] ?? policy.default ?? "deny";
  return effect === "allow"
    ? { reply: "once", message: `allowed by policy (${request.action})` }
    : { reply: "reject", message: `"${request.action}" is not allowed in this headless run; continue without it and explain in your answer.` };
}
