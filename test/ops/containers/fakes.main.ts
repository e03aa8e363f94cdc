/**
 * One fake of the outside world, as a container of the test image (`--target testkit`), for the
 * compose test: FAKE=telegram | model | gitea. The fake itself is the test kit's, on loopback; a
 * forwarder publishes it on FAKE_PORT (8080) so other containers reach it by the service's name,
 * and a control API on CONTROL_PORT (9000) lets the test, on the host, play and look:
 *
 * - telegram: `POST /conversation` plays the demo's person (request, answer, Approve) in chat
 *   CHAT_ID; `GET /conversation` says how far it got, with the transcript and the outcome.
 * - model: answers from the demo's script (the analyst asks, proposes; dev and reviewer take two
 *   rounds). `GET /requests`: how many completions it served.
 * - gitea: the API and git over HTTP with the token GITEA_TOKEN, holding `demo/hello` as the
 *   demo's git host does. `GET /refs?repo=` and `GET /file?repo=&ref=&path=` read what was pushed;
 *   `GET /api-requests`: the API calls and whether each carried the token.
 */
import { execFile } from "node:child_process";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createConnection, createServer as createTcpServer } from "node:net";
import { promisify } from "node:util";
import { FakeGitea, FakeTelegram, startScriptedModel } from "@ratatoskr/testkit";
import {
  playDemoConversation,
  type DemoOutcome,
} from "../../../services/all-in-one/src/demo/demo-conversation.ts";
import { HELLO_SERVER, scriptDemoModel } from "../../../services/all-in-one/src/demo/demo-script.ts";

const git = promisify(execFile);
const FAKE = process.env["FAKE"];
const FAKE_PORT = Number(process.env["FAKE_PORT"] ?? 8080);
const CONTROL_PORT = Number(process.env["CONTROL_PORT"] ?? 9000);

type Route = (url: URL, body: unknown) => Promise<unknown> | unknown;

/** Publishes a loopback server on every address of the container. */
function forward(target: string, port: number): Promise<void> {
  const { hostname, port: targetPort } = new URL(target);
  const server = createTcpServer((socket) => {
    const upstream = createConnection({ host: hostname, port: Number(targetPort) });
    socket.pipe(upstream).pipe(socket);
    const close = () => (socket.destroy(), upstream.destroy());
    socket.on("error", close);
    upstream.on("error", close);
  });
  return new Promise((resolve) => server.listen(port, "0.0.0.0", resolve));
}

function serveControl(routes: Record<string, Route>): Promise<void> {
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://control");
      const route = routes[`${req.method} ${url.pathname}`];
      const answer = (status: number, value: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (!route) return answer(404, { error: `no route ${req.method} ${url.pathname}` });
      Promise.resolve()
        .then(() => route(url, raw ? JSON.parse(raw) : undefined))
        .then(
          (value) => answer(200, value ?? {}),
          (error: unknown) => answer(500, { error: error instanceof Error ? error.message : String(error) }),
        );
    });
  });
  return new Promise((resolve) => server.listen(CONTROL_PORT, "0.0.0.0", resolve));
}

async function telegram(): Promise<string> {
  const fake = await new FakeTelegram({ token: process.env["TELEGRAM_BOT_TOKEN"] }).start();
  const chatId = Number(process.env["CHAT_ID"] ?? 1001);
  const conversation = {
    state: "idle",
    transcript: [] as string[],
    outcome: undefined as DemoOutcome | undefined,
    error: "",
  };
  await serveControl({
    "POST /conversation": () => {
      if (conversation.state !== "idle") throw new Error("the conversation was already played");
      conversation.state = "running";
      playDemoConversation({
        telegram: fake,
        chatId,
        print: (line) => conversation.transcript.push(line),
      }).then(
        (outcome) => Object.assign(conversation, { state: "done", outcome }),
        (error: unknown) => Object.assign(conversation, { state: "failed", error: String(error) }),
      );
      return { started: true };
    },
    "GET /conversation": () => conversation,
  });
  return fake.url;
}

async function model(): Promise<string> {
  const fake = await startScriptedModel();
  scriptDemoModel(fake);
  await serveControl({ "GET /requests": () => ({ count: fake.requests.length }) });
  return fake.url;
}

async function gitea(): Promise<string> {
  const fake = await new FakeGitea({ token: process.env["GITEA_TOKEN"] }).start();
  await fake.createRepo("demo/hello", {
    "README.md": "# hello\n\nA tiny service for the Ratatoskr demo.\n",
    "server.js": HELLO_SERVER,
  });
  const bare = (repo: string | null) => fake.bareDir(repo ?? "");
  const gitIn = async (dir: string, args: string[]) => (await git("git", args, { cwd: dir })).stdout;
  await serveControl({
    "GET /refs": async (url) =>
      (await gitIn(bare(url.searchParams.get("repo")), ["for-each-ref", "--format=%(refname) %(objectname)"]))
        .trim()
        .split("\n")
        .map((line) => ({ ref: line.split(" ")[0], sha: line.split(" ")[1] })),
    "GET /file": async (url) => ({
      text: await gitIn(bare(url.searchParams.get("repo")), [
        "show",
        `${url.searchParams.get("ref")}:${url.searchParams.get("path")}`,
      ]),
    }),
    "GET /api-requests": () => fake.requests,
  });
  return fake.url;
}

const start = { telegram, model, gitea }[FAKE ?? ""];
if (!start) {
  console.error(`FAKE must be telegram, model or gitea (is ${FAKE ?? "unset"})`);
  process.exit(2);
}
const url = await start();
await forward(url, FAKE_PORT);
console.log(`fake ${FAKE} on :${FAKE_PORT} (${url}), control on :${CONTROL_PORT}`);
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => process.exit(0));
