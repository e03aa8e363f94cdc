#!/usr/bin/env node
// Runs `opencode serve` behind a small HTTP relay and restarts it when it has grown past a memory
// limit and can be restarted without cutting a turn (README, "Several opencode servers").
//
// opencode keeps something of every directory it has worked in (~4 MB a task, never given back;
// its own release route leaves more behind). So when the server's process group holds more than
// OPENCODE_RECYCLE_MB:
//   1. it drains: new sessions (POST /api/session) are held back, everything else goes through,
//      so the running turns end;
//   2. once nothing is in flight and no session is running, every request is held for a moment
//      and both are checked again (a prompt sent in the meantime keeps the server up);
//   3. opencode is stopped, started again on the same internal port, and the held requests go to
//      it. Sessions live on disk, so they carry on there; the event streams are closed and the
//      clients reconnect. The first new session or prompt in a directory used before the restart
//      waits until the new opencode has loaded that directory again (directory-loads.mjs).
// A drain that does not empty within OPENCODE_RECYCLE_DRAIN_MS lets the held sessions go and tries
// again at the next check: under unbroken long turns the server is recycled at the next lull.
//
// Usage: recycle.mjs HOST PORT -- COMMAND... (COMMAND gets `--hostname 127.0.0.1 --port P` added).
import { spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import { createDirectoryLoads, isNewSession, jsonField, promptedSession, readBody } from "./directory-loads.mjs";
import { steadyGroupRss } from "./group-memory.mjs";

const [host, portText, separator, ...command] = process.argv.slice(2);
if (!host || !portText || separator !== "--" || command.length === 0) {
  console.error("usage: recycle.mjs HOST PORT -- COMMAND...");
  process.exit(2);
}
const env = (name, fallback) => Number(process.env[name] ?? fallback);
const limitBytes = env("OPENCODE_RECYCLE_MB", 0) * 1024 * 1024;
const checkMs = env("OPENCODE_RECYCLE_CHECK_MS", 15_000);
const drainMs = env("OPENCODE_RECYCLE_DRAIN_MS", 8_000);
/** Never twice within this: a limit set below what a fresh opencode holds must not loop restarts. */
const minGapMs = env("OPENCODE_RECYCLE_MIN_GAP_MS", 300_000);
const CONFIRM_MS = 300;
const auth = `Basic ${Buffer.from(`opencode:${process.env.OPENCODE_SERVER_PASSWORD ?? ""}`).toString("base64")}`;

const log = (level, msg, fields = {}) =>
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), service: "opencode-recycle", msg, ...fields })}\n`);

/** A free loopback port for opencode itself. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

const upstreamPort = await freePort();
/** Kept-alive connections to opencode; a new pool after each restart (the old sockets are dead). */
let agent = new http.Agent({ keepAlive: true });

// ---- opencode, the child ----

let child;
let exiting = false;

function startOpencode() {
  // Own process group: a stop reaches opencode and everything it started.
  child = spawn(command[0], [...command.slice(1), "--hostname", "127.0.0.1", "--port", String(upstreamPort)], {
    stdio: "inherit",
    detached: true,
  });
  const started = child;
  started.once("exit", (code, signal) => {
    if (started !== child || recycling || exiting) return;
    // Not ours to restart: a crash ends this process too, and its supervisor (compose,
    // Kubernetes) restarts the pair, as it would restart opencode alone.
    log("error", "opencode exited", { code, signal });
    process.exit(code || 1);
  });
}

function stopGroup(proc, graceMs) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const kill = (signal) => {
      try {
        process.kill(-proc.pid, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill("SIGKILL"), graceMs);
    proc.once("exit", () => {
      clearTimeout(timer);
      kill("SIGKILL"); // what it left of its group (tool processes)
      resolve();
    });
    kill("SIGTERM");
  });
}

function request(method, path, timeoutMs) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: upstreamPort, method, path, headers: { authorization: auth }, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${path} answered ${res.statusCode}`))));
    });
    req.on("timeout", () => req.destroy(new Error(`${path} did not answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

async function waitHealthy(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (JSON.parse(await request("GET", "/global/health", 2_000)).healthy) return;
    } catch {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error("opencode exited while starting");
      if (Date.now() > deadline) throw new Error(`opencode not healthy after ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const activeSessions = async () => Object.keys(JSON.parse(await request("GET", "/api/session/active", 5_000)).data ?? {}).length;

// ---- the relay ----

/** Requests being answered, not counting event streams (they never end on their own). */
let inFlight = 0;
/** Requests received while held: all of them during a restart, new sessions while draining. */
let held = [];
let holdAll = false;
let draining = false;
let recycling = false;
const streams = new Set();

const isStream = (req) => req.url.split("?")[0].endsWith("/event") || (req.headers.accept ?? "").includes("text/event-stream");

const directories = createDirectoryLoads({ ask: (url, timeoutMs) => request("GET", url, timeoutMs), log });

/**
 * Relays one request. A new session's body is read first (`body`, naming its `directory`), so the
 * session's id can be paired with that directory from the answer.
 */
function relay(req, res, body, directory) {
  directories.saw(req);
  const stream = isStream(req);
  if (!stream) inFlight++;
  else streams.add(res);
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    if (!stream) inFlight--;
    else streams.delete(res);
  };
  const upstream = http.request(
    { host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on("end", done);
      if (directory && answer.statusCode === 200) {
        const chunks = [];
        answer.on("data", (chunk) => chunks.push(chunk));
        answer.on("end", () => {
          const id = jsonField(Buffer.concat(chunks), (b) => b.data?.id);
          if (typeof id === "string") directories.sessionMade(directory, id);
        });
      }
    },
  );
  upstream.on("error", (err) => {
    done();
    if (res.headersSent) return res.destroy();
    res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: `opencode did not answer: ${err.message}` }));
  });
  res.on("close", () => {
    done();
    upstream.destroy();
  });
  if (body) upstream.end(body);
  else req.pipe(upstream);
}

/** A new session or a prompt in a directory the new opencode has not loaded yet waits for it. */
async function relayWhenLoaded(req, res) {
  const newSession = isNewSession(req);
  if (!newSession && !directories.promptsCold(req)) return relay(req, res);
  // Counted as in flight meanwhile: a restart must not begin under a request about to be relayed.
  inFlight++;
  let body;
  let directory;
  try {
    body = newSession ? await readBody(req) : undefined;
    directory = body ? jsonField(body, (b) => b.location?.directory) : undefined;
    await directories.ready(body ? directory : directories.directoryOfSession(promptedSession(req)));
  } finally {
    inFlight--;
  }
  if (!req.socket.destroyed) relay(req, res, body, directory);
}

function handle(req, res) {
  relayWhenLoaded(req, res).catch((err) => {
    if (res.headersSent) return res.destroy();
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: `not relayed: ${err.message}` }));
  });
}

const server = http.createServer((req, res) => {
  const newSession = isNewSession(req);
  // A caller that gave up while held is not relayed (an event stream would stay open for nobody).
  if (holdAll || (draining && newSession)) held.push({ newSession, go: () => !req.socket.destroyed && handle(req, res) });
  else handle(req, res);
});
server.keepAliveTimeout = 65_000;

// WebSocket upgrades (opencode's terminals) are piped through as raw sockets: like event streams,
// they are not waited for, and a restart closes them.
const tunnels = new Set();
server.on("upgrade", (req, socket, head) => {
  const upstream = net.connect(upstreamPort, "127.0.0.1", () => {
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket).pipe(upstream);
  });
  tunnels.add(socket);
  const close = () => {
    tunnels.delete(socket);
    socket.destroy();
    upstream.destroy();
  };
  socket.on("error", close).on("close", close);
  upstream.on("error", close).on("close", close);
});

function releaseHeld() {
  const waiting = held;
  held = [];
  for (const { go } of waiting) go();
}

// ---- recycling ----

async function recycle(rss) {
  const began = Date.now();
  recycling = true;
  const old = child;
  for (const res of streams) res.destroy();
  for (const socket of tunnels) socket.destroy();
  await stopGroup(old, 10_000);
  agent.destroy();
  agent = new http.Agent({ keepAlive: true });
  if (exiting) return; // stopped meanwhile: the signal's handler ends this process
  startOpencode();
  await waitHealthy(60_000).catch((err) => fail(`opencode did not come back after a recycle: ${err.message}`));
  const cold = directories.restarted();
  recycling = false;
  lastRecycleAt = Date.now();
  log("info", "opencode recycled", { pid: child.pid, cold, rssMb: Math.round(rss / 1048576), limitMb: limitBytes / 1048576, tookMs: Date.now() - began });
}

/** A fresh opencode counts as just recycled. */
let lastRecycleAt = Date.now();

async function maybeRecycle() {
  if (Date.now() - lastRecycleAt < minGapMs) return;
  const rss = await steadyGroupRss(child.pid, limitBytes);
  if (rss < limitBytes) return;
  draining = true;
  const until = Date.now() + drainMs;
  try {
    while (Date.now() < until) {
      if (inFlight === 0 && (await activeSessions()) === 0) {
        holdAll = true;
        await new Promise((r) => setTimeout(r, CONFIRM_MS));
        // Anything sent since is held, so a busy server is seen as such and left running.
        if (inFlight === 0 && held.every((h) => h.newSession) && (await activeSessions()) === 0) {
          await recycle(rss);
          return;
        }
        holdAll = false;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    log("info", "opencode over its memory limit but busy: recycled at a later lull", { rssMb: Math.round(rss / 1048576) });
  } finally {
    holdAll = false;
    draining = false;
    releaseHeld();
  }
}

/** Ends this process and opencode's group: its supervisor starts both again. */
async function fail(message) {
  if (exiting) return; // a stop signal's handler is ending this process already
  log("error", message);
  exiting = true;
  await stopGroup(child, 2_000);
  process.exit(1);
}

// A stop goes to opencode; this process ends as it did (128 + the signal, as a shell reports it).
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    exiting = true;
    server.close();
    const stopping = child;
    void stopGroup(stopping, 10_000).then(() =>
      process.exit(stopping.signalCode ? 128 + os.constants.signals[stopping.signalCode] : (stopping.exitCode ?? 0)),
    );
  });
}

startOpencode();
await waitHealthy(60_000).catch((err) => fail(err.message));
if (!exiting) server.listen(Number(portText), host, () => log("info", "relaying to opencode", { host, port: Number(portText), limitMb: limitBytes / 1048576 }));

if (limitBytes > 0) {
  const tick = () =>
    maybeRecycle()
      .catch((err) => log("warn", "recycle check failed", { err: err.message }))
      .finally(() => setTimeout(tick, checkMs).unref());
  setTimeout(tick, checkMs).unref();
}
