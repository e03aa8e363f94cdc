import { reply, type ScriptedModel } from "@ratatoskr/testkit";

/** The agents' system prompts start with these lines (agents/*.md). */
const ANALYST = "You are the analyst of Ratatoskr";
const DEV = "You are the developer agent of Ratatoskr";
export const REVIEWER = "You are the reviewer agent of Ratatoskr";

/** The draft's title: the dev and review prompts carry it, so the rules below find their round. */
export const DEMO_TITLE = "Add a /health endpoint";

/** The demo repository's server before the task (see demo-git.ts). */
export const HELLO_SERVER = 'require("http").createServer((_, res) => res.end("hello")).listen(3000);\n';

/** Round 1: /health answers, but in plain text, which the reviewer sends back. */
const ROUND_1_SERVER = [
  'require("http")',
  "  .createServer((req, res) => {",
  '    if (req.url === "/health") return res.end("ok");',
  '    res.end("hello");',
  "  })",
  "  .listen(3000);",
  "",
].join("\n");

/** Round 2: the JSON answer the acceptance criteria ask for. */
const ROUND_2_HEALTH = [
  '    if (req.url === "/health") {',
  '      res.writeHead(200, { "Content-Type": "application/json" });',
  '      return res.end(JSON.stringify({ status: "ok" }));',
  "    }",
].join("\n");

const SERVER = "demo/hello/server.js";

/**
 * What the scripted model answers in the Telegram demo. Rules are tried in order, so the one for
 * the person's answer (whose prompt also contains the original request) comes first.
 */
export function scriptDemoModel(model: ScriptedModel): void {
  model.addRule({
    name: "analyst proposes a draft once it knows the response format",
    match: { systemIncludes: ANALYST, promptIncludes: '{"status":"ok"}' },
    reply: [
      reply.json({
        phase: "propose",
        draft: {
          title: DEMO_TITLE,
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

  scriptDevAndReview(model);
}

/**
 * The pipeline's part, the same behind both doors: dev adds /health in plain text, the reviewer
 * asks for JSON, dev fixes it, the review passes. Dev and review rules are told apart by the
 * round their prompt names.
 */
export function scriptDevAndReview(model: ScriptedModel): void {
  model.addRule({
    name: "dev round 1 reads server.js and adds /health (in plain text)",
    match: { systemIncludes: DEV, promptIncludes: `round 1 of at most` },
    reply: [
      reply.read(SERVER),
      reply.write(SERVER, ROUND_1_SERVER),
      reply.json({ summary: "server.js answers GET /health", testsRun: "none", done: true }),
    ],
  });
  model.addRule({
    name: "reviewer round 1 asks for the JSON answer",
    match: { systemIncludes: REVIEWER, promptIncludes: "round 1. The task" },
    reply: [
      reply.json({
        passed: false,
        summary: "/health answers, but not as the task asks.",
        findings: [
          {
            severity: "major",
            file: "server.js",
            line: 3,
            text: '/health must answer {"status":"ok"} as application/json, not plain "ok"',
          },
        ],
      }),
    ],
  });
  model.addRule({
    name: "dev round 2 edits server.js to answer JSON",
    match: { systemIncludes: DEV, promptIncludes: `round 2 of at most` },
    reply: [
      reply.read(SERVER),
      reply.edit(SERVER, '    if (req.url === "/health") return res.end("ok");', ROUND_2_HEALTH),
      reply.json({ summary: "/health answers JSON with its content type", testsRun: "none", done: true }),
    ],
  });
  model.addRule({
    name: "reviewer round 2 passes",
    match: { systemIncludes: REVIEWER, promptIncludes: "round 2. The task" },
    reply: [reply.json({ passed: true, summary: "Meets both acceptance criteria.", findings: [] })],
  });
}
