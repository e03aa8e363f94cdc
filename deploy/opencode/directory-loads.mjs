// What the recycling relay (recycle.mjs) knows of the directories opencode works in, so that after
// a restart each one used again is loaded again before its next session or prompt: a prompt to a
// directory opencode has not loaded goes unanswered, and a client that warmed a directory before
// the restart does not warm it again. Only directories used again are loaded, a few at a time:
// loading every one warmed lately brought the memory straight back, and dozens of loads at once
// left opencode answering nothing (a new session waited minutes).

/** Entries kept per map, the latest: a long-lived relay must not grow without end. */
const REMEMBERED = 10_000;
const LOADS_AT_ONCE = 3;
const LOAD_WAIT_MS = 30_000;
const MAX_SESSION_BODY = 64 * 1024;

function remember(map, key, value) {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value);
}

/** The clients' warm-up probes: `GET /api/provider/{id}` or `GET /api/model`, each with `?location[directory]=…`. */
const isProbe = (req) =>
  req.method === "GET" && (req.url.startsWith("/api/provider/") || req.url.startsWith("/api/model?")) && req.url.includes("location%5Bdirectory%5D=");
const probeDirectory = (url) => new URL(url, "http://relay").searchParams.get("location[directory]") ?? "";
/** A probe's answer once the directory is loaded: the provider found, or a model list that is not empty (it is while loading). */
const loaded = (url, body) => !url.startsWith("/api/model?") || (JSON.parse(body).data ?? []).length > 0;

export const isNewSession = (req) => req.method === "POST" && req.url.split("?")[0] === "/api/session";
/** `POST /api/session/{id}/prompt` → the session id. */
export const promptedSession = (req) => (req.method === "POST" ? /^\/api\/session\/([^/?]+)\/prompt(?:\?|$)/.exec(req.url)?.[1] : undefined);

export const jsonField = (buffer, read) => {
  try {
    return read(JSON.parse(buffer.toString("utf8")));
  } catch {
    return undefined;
  }
};

/** Reads a small request body whole (a new session's), so its directory is known before it is relayed. */
export function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_SESSION_BODY) return req.destroy(new Error("session request too large"));
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * `ask(url, timeoutMs)` asks opencode (resolves with the answer's body, rejects on an error);
 * `log(level, msg, fields)`.
 */
export function createDirectoryLoads({ ask, log }) {
  /** The latest probe URL per directory, and each session's directory (learned as sessions are made). */
  const probes = new Map();
  const sessionDirectory = new Map();
  /** Directories to load again before their next session or prompt: those known at the last restart. */
  let cold = new Set();
  const loading = new Map();
  let slots = LOADS_AT_ONCE;
  const waiters = [];

  const takeSlot = () => (slots > 0 ? (slots--, Promise.resolve()) : new Promise((resolve) => waiters.push(resolve)));
  const giveSlot = () => (waiters.length > 0 ? waiters.shift()() : slots++);

  async function askUntilLoaded(directory) {
    await takeSlot();
    const began = Date.now();
    try {
      const url = probes.get(directory);
      const until = Date.now() + LOAD_WAIT_MS;
      let ok = false;
      while (url && !ok && Date.now() < until) {
        ok = await ask(url, 10_000).then((body) => loaded(url, body)).catch(() => false);
        if (!ok) await new Promise((r) => setTimeout(r, 200));
      }
      log(ok ? "info" : "warn", ok ? "directory loaded again" : "directory not loaded again within 30 s", { directory, tookMs: Date.now() - began });
    } finally {
      cold.delete(directory);
      loading.delete(directory);
      giveSlot();
    }
  }

  return {
    /** A request going to opencode: a probe is remembered. */
    saw(req) {
      if (isProbe(req)) remember(probes, probeDirectory(req.url), req.url);
    },
    sessionMade(directory, sessionId) {
      remember(sessionDirectory, sessionId, directory);
    },
    /** opencode was started again: every directory known is cold until used. Returns how many. */
    restarted() {
      cold = new Set(probes.keys());
      return cold.size;
    },
    /** A prompt to a session whose directory is cold (a new session's body must be read to tell). */
    promptsCold: (req) => cold.has(sessionDirectory.get(promptedSession(req))),
    directoryOfSession: (sessionId) => sessionDirectory.get(sessionId),
    /** Resolves once `directory` is loaded (at once when it is not cold); one load per directory at a time. */
    ready(directory) {
      if (!directory || !cold.has(directory)) return Promise.resolve();
      let done = loading.get(directory);
      if (!done) {
        done = askUntilLoaded(directory);
        loading.set(directory, done);
      }
      return done;
    },
  };
}
