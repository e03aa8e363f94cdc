import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { startScriptedModel, startSharedScriptedModel, type ScriptedModel, type ScriptedModelServer } from "../scripted-model/index.ts";
import type { AgentSpec } from "./opencode-config.ts";
import { startOpencodeServer, type OpencodeServer } from "./opencode-server.ts";

export interface TestOpencodeOptions {
  /** A directory of real agent files (e.g. the repository's `agents/`). */
  agentsDir?: string;
  /** Agents written for the test. */
  agents?: Record<string, AgentSpec>;
  /** Model ids of the scripted provider, default ["scripted"]. */
  models?: string[];
  /** Directories the file's sessions work in (its workspaces), besides `makeWorkDir`'s. */
  claims?: string[];
  /** A server of the file's own: for a file that freezes, stops or reconfigures it. */
  own?: boolean;
}

export interface TestOpencode {
  /** The file's scripted model: its rules and requests are its own, shared server or not. */
  model: ScriptedModel & { claim(directory: string): void };
  /** `stop()` gives a shared server back; `freeze()`/`thaw()` need an own one. */
  opencode: OpencodeServer;
}

/**
 * Set to `own` to give every file its own opencode and scripted model, as before they were
 * shared (to rule sharing out when a file fails).
 */
export const TEST_OPENCODE_VAR = "RATATOSKR_TEST_OPENCODE";

/** Above this, a shared server is restarted before the next file takes it (opencode keeps every directory it loaded). */
const RECYCLE_RSS_MB = 1_000;
/**
 * A shared server no file has taken for this long (ms) is stopped: an idle opencode still uses
 * 2-3 % of a core and holds ~0.5 GB, and the suite's last part (unit files) needs none.
 */
export const TEST_OPENCODE_IDLE_VAR = "RATATOSKR_TEST_OPENCODE_IDLE_MS";
const IDLE_STOP_MS = 10_000;

interface SharedServer {
  key: string;
  server: OpencodeServer;
  users: number;
  idleTimer?: NodeJS.Timeout;
}

let sharedModel: Promise<ScriptedModelServer> | undefined;
const sharedServers = new Map<string, Promise<SharedServer>>();

/**
 * An opencode serve on the scripted model for one test file. Starting one costs ~3 s of CPU, and
 * a run starts dozens, so the files of a vitest worker (which run one at a time and keep their
 * modules) share one per configuration, each through its own view of one scripted model; a
 * session's system prompt names its directory, which routes its requests to its file's view.
 * Outside vitest (a bench, the chaos runner) every caller gets its own.
 */
export async function startTestOpencode(options: TestOpencodeOptions = {}): Promise<TestOpencode> {
  const shared = !options.own && process.env[TEST_OPENCODE_VAR] !== "own" && process.env["VITEST"] !== undefined;
  return shared ? startShared(options) : startOwn(options);
}

async function startOwn(options: TestOpencodeOptions): Promise<TestOpencode> {
  const model = await startScriptedModel();
  try {
    const opencode = await startOpencodeServer(serverOptions(options, model.url));
    return { model: { ...model, claim: () => undefined }, opencode };
  } catch (error) {
    await model.close();
    throw error;
  }
}

async function startShared(options: TestOpencodeOptions): Promise<TestOpencode> {
  sharedModel ??= startSharedScriptedModel();
  const modelServer = await sharedModel;
  const shared = await takeServer(options, modelServer.url);
  const { server } = shared;
  const workRoot = join(server.rootDir, "work", `file-${randomBytes(4).toString("hex")}`);
  await mkdir(workRoot, { recursive: true });
  const model = modelServer.openView([workRoot, ...(options.claims ?? [])]);
  let released = false;
  const opencode: OpencodeServer = {
    url: server.url,
    password: server.password,
    rootDir: server.rootDir,
    configDir: server.configDir,
    configFile: server.configFile,
    sandboxed: server.sandboxed,
    processGroup: server.processGroup,
    output: () => server.output(),
    async makeWorkDir(name) {
      const dir = join(workRoot, `${name}-${randomBytes(3).toString("hex")}`);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    freeze: () => {
      throw new Error("a shared opencode server cannot be frozen: start the file's own (`own: true`)");
    },
    thaw: () => undefined,
    async stop() {
      if (released) return;
      released = true;
      await model.close();
      release(shared);
      await rm(workRoot, { recursive: true, force: true });
    },
  };
  return { model, opencode };
}

async function takeServer(options: TestOpencodeOptions, modelUrl: string): Promise<SharedServer> {
  // One directory however it is spelled (`agents/` or `agents`): one server.
  const agentsDir = options.agentsDir === undefined ? null : resolve(options.agentsDir);
  const key = JSON.stringify([agentsDir, options.agents ?? null, options.models ?? null]);
  const current = await sharedServers.get(key)?.catch(() => undefined);
  if (current) clearTimeout(current.idleTimer);
  if (current && (current.users > 0 || (alive(current.server) && groupRssMb(current.server.processGroup) < RECYCLE_RSS_MB))) {
    current.users += 1;
    return current;
  }
  if (current) await current.server.stop();
  const next = startOpencodeServer(serverOptions(options, modelUrl)).then((server): SharedServer => ({ key, server, users: 0 }));
  sharedServers.set(key, next);
  next.catch(() => sharedServers.delete(key));
  const shared = await next;
  shared.users += 1;
  return shared;
}

function release(shared: SharedServer): void {
  shared.users -= 1;
  if (shared.users > 0) return;
  shared.idleTimer = setTimeout(() => {
    sharedServers.delete(shared.key);
    void shared.server.stop();
  }, Number(process.env[TEST_OPENCODE_IDLE_VAR] ?? IDLE_STOP_MS));
  shared.idleTimer.unref();
}

function serverOptions(options: TestOpencodeOptions, baseUrl: string) {
  return {
    provider: { baseUrl, ...(options.models ? { models: options.models } : {}) },
    ...(options.agentsDir ? { agentsDir: options.agentsDir } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
  };
}

function alive(server: OpencodeServer): boolean {
  return existsSync(`/proc/${server.processGroup}`);
}

/** Resident memory of every process in the group (opencode and what it runs), in MB. */
function groupRssMb(group: number): number {
  let pages = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === group) pages += Number(fields[21]);
    } catch {
      // gone meanwhile
    }
  }
  return (pages * 4096) / 1024 / 1024;
}
