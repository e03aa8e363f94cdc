import { reply, type ScriptedModel } from "@ratatoskr/testkit";
import { REVIEWER, scriptDevAndReview } from "./demo-script.ts";

const PLANNER = "You are the planner agent of Ratatoskr";

/** The issue the Gitea demo plays: the same story as the Telegram demo's, told on an issue. */
export const DEMO_ISSUE = {
  title: "Add a /health endpoint",
  body: 'The load balancer needs a health check: `GET /health` should answer 200 with `{"status":"ok"}`. Every other path keeps answering "hello".',
};

const PLAN = [
  "1. In `server.js`, answer `GET /health` before the default reply.",
  '2. Reply 200 with `{"status":"ok"}` as `application/json`.',
  '3. Leave every other path answering "hello".',
].join("\n");

/** The scripted model's answers for the Gitea demo: a plan that passes its review, then the pipeline. */
export function scriptGiteaDemoModel(model: ScriptedModel): void {
  model.addRule({
    name: "planner writes the plan of the issue",
    match: { systemIncludes: PLANNER, promptIncludes: "`/agent plan`" },
    reply: [reply.read("demo/hello/server.js"), reply.json({ plan: PLAN, reply: "Here is the plan." })],
  });
  model.addRule({
    name: "reviewer passes the plan",
    match: { systemIncludes: REVIEWER, promptIncludes: "Plan review of Gitea command" },
    reply: [reply.json({ passed: true, summary: "The plan covers the issue.", findings: [] })],
  });
  scriptDevAndReview(model);
}
