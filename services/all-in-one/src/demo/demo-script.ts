import { reply, type ScriptedModel } from "@ratatoskr/testkit";

/** The analyst's system prompt starts with this line (agents/analyst.md). */
const ANALYST = "You are the analyst of Ratatoskr";

/**
 * What the scripted model answers in the demo. Rules are tried in order, so the one for the
 * person's answer (whose prompt also contains the original request) comes first.
 */
export function scriptDemoModel(model: ScriptedModel): void {
  model.addRule({
    name: "analyst proposes a draft once it knows the response format",
    match: { systemIncludes: ANALYST, promptIncludes: '{"status":"ok"}' },
    reply: [
      reply.json({
        phase: "propose",
        draft: {
          title: "Add a /health endpoint",
          goal: 'GET /health answers 200 with {"status":"ok"}; every other path keeps answering "hello".',
          repos: ["demo/hello"],
          why: "The load balancer needs a health check.",
          acceptanceCriteria: ['GET /health returns 200 and {"status":"ok"}', 'GET / still returns "hello"'],
        },
      }),
    ],
  });
  model.addRule({
    name: "analyst asks what the endpoint should answer",
    match: { systemIncludes: ANALYST },
    reply: [
      reply.json({
        phase: "ask",
        questions: ["What should /health answer: plain text or JSON, and with which status code?"],
      }),
    ],
  });
}
