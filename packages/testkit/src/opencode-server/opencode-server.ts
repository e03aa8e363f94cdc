import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveOpencodeBinary } from "./opencode-binary.ts";
import { buildOpencodeConfig, EMPTY_MODEL_CATALOGUE, PROVIDER_KEY_VAR, renderAgentMarkdown, type AgentSpec, type ProviderSpec } from "./opencode-config.ts";
import { freePort } from "./free-port.ts";
import { killGroup, spawnWatched } from "./group-watchdog.ts";
import { SERVE_LAUNCHER, toolSandboxSetup, type ToolSandboxMode } from "./tool-sandbox.ts";

export interface OpencodeServerOptions {
  provider: ProviderSpec;
  /** Top-level `model` of opencode.json, default "<provider id>/<first model>"; `null` leaves it out. */
  model?: string | null;
  /** Agents written to `<configDir>/agent/<name>.md`. */
  agents?: Record<string, AgentSpec>;
  /** A directory of real agent files (e.g. the repository's `agents/`): every `*.md` is installed as is. */
  agentsDir?: string;
  /** Extra top-level keys merged into opencode.json. */
  extraConfig?: Record<string, unknown>;
  /** Basic-auth password (user "opencode"); random when omitted. */
  password?: string;
  /** How long to wait for `/global/health` (ms), default 30 s. */
  startTimeoutMs?: number;
  /** Directory the server's temp root is made in; the OS temp directory when omitted. */
  parentDir?: string;
  /**
   * What the server's watchdog removes when this process dies without stopping it: its temp root
   * when omitted; a caller whose own temp directory holds the root (`parentDir`) passes that.
   */
  removeOnParentExit?: string;
  /** How the agents' tools run (see {@link ToolSandboxMode}); default `auto`. */
  toolSandbox?: ToolSandboxMode;
  /**
   * Patterns (`*` spans `/`) of the directories that hold session directories; the sandbox binds
   * only the session's own. Default: `<root>/work` (makeWorkDir) and any `…/tasks` below
   * `parentDir` or the OS temp directory (the services' WORKSPACE_DIR layout).
   */
  sandboxRoots?: string[];
  /** RATATOSKR_SANDBOX_NETWORK of the sandbox: `none` (default) or `host` (commands share opencode's network). */
  sandboxNetwork?: "none" | "host";
  /**
   * Credentials written to opencode's `auth.json` in its XDG data directory, where `opencode auth
   * login` keeps a real deployment's provider keys (`{ <provider id>: { type: "api", key } }`):
   * canaries for the escape suite. A provider id opencode does not know is never called.
   */
  auth?: Record<string, { type: "api"; key: string }>;
  /** More variables for deploy/opencode/serve, e.g. `OPENCODE_RECYCLE_MB` (the relay that recycles opencode). */
  env?: Record<string, string>;
}

export interface OpencodeServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string;
  readonly password: string;
  /** Temp root holding config, XDG dirs and `work/` (a scratch directory for sessions). */
  readonly rootDir: string;
  readonly configDir: string;
  readonly configFile: string;
  /** True when every bash tool call runs in the bubblewrap sandbox (deploy/opencode/sandbox). */
  readonly sandboxed: boolean;
  /** A fresh directory under the root, for one test's session (`location.directory`). */
  makeWorkDir(name: string): Promise<string>;
  /** stdout+stderr of the server so far. */
  output(): string;
  /** SIGSTOP the server's process group: it holds connections but answers nothing (a frozen server). */
  freeze(): void;
  /** SIGCONT after `freeze()`. */
  thaw(): void;
  /** Id of the server's process group (opencode, the tools it runs, its watchdog). */
  readonly processGroup: number;
  /** Kills the whole process group and removes the temp root. Safe to call twice. */
  stop(): Promise<void>;
}

// Servers still running when this process exits are killed synchronously here, with their temp
// roots; a process that dies without running this (SIGKILL, a default signal action) is covered
// by each server's watchdog (group-watchdog.ts).
const running = new Map<ChildProcess, string>();
process.once("exit", () => {
  for (const [child, rootDir] of running) {
    killGroup(child, "SIGKILL");
    rmSync(rootDir, { recursive: true, force: true });
  }
});

/** Starts a real `opencode serve` on a free loopback port with a fully isolated configuration. */
export async function startOpencodeServer(options: OpencodeServerOptions): Promise<OpencodeServer> {
  const rootDir = await mkdtemp(join(options.parentDir ?? tmpdir(), "ratatoskr-opencode-"));
  const configDir = join(rootDir, "config");
  const configFile = join(configDir, "opencode.json");
  await mkdir(join(configDir, "agent"), { recursive: true });
  const providerId = options.provider.id ?? "fake";
  const model = options.model === null ? undefined : (options.model ?? `${providerId}/${options.provider.models?.[0] ?? "scripted"}`);
  const sandbox = toolSandboxSetup(options.toolSandbox ?? "auto", options.sandboxRoots ?? [join(rootDir, "work"), join(options.parentDir ?? tmpdir(), "*", "tasks")]);
  const modelsFile = join(rootDir, "models.json");
  await writeFile(modelsFile, EMPTY_MODEL_CATALOGUE);
  await writeFile(configFile, JSON.stringify(buildOpencodeConfig(options.provider, model, { ...sandbox.config, ...options.extraConfig }), null, 2));
  if (options.agentsDir) {
    for (const file of (await readdir(options.agentsDir)).filter((f) => f.endsWith(".md"))) {
      await copyFile(join(options.agentsDir, file), join(configDir, "agent", file));
    }
  }
  for (const [name, spec] of Object.entries(options.agents ?? {})) {
    await writeFile(join(configDir, "agent", `${name}.md`), renderAgentMarkdown(spec));
  }
  const xdg = Object.fromEntries(
    await Promise.all(
      ["CONFIG", "DATA", "CACHE", "STATE"].map(async (k) => {
        const dir = join(rootDir, "xdg", k.toLowerCase());
        await mkdir(dir, { recursive: true });
        return [`XDG_${k}_HOME`, dir] as const;
      }),
    ),
  );
  if (options.auth) {
    await mkdir(join(xdg["XDG_DATA_HOME"]!, "opencode"), { recursive: true });
    await writeFile(join(xdg["XDG_DATA_HOME"]!, "opencode", "auth.json"), JSON.stringify(options.auth, null, 2), { mode: 0o600 });
  }
  const password = options.password ?? randomBytes(12).toString("hex");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env["PATH"],
    HOME: rootDir,
    ...xdg,
    OPENCODE_CONFIG_DIR: configDir,
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_MODELS_PATH: modelsFile,
    OPENCODE_SERVER_PASSWORD: password,
    ...(options.provider.apiKey ? { [PROVIDER_KEY_VAR]: options.provider.apiKey } : {}),
    ...sandbox.env,
    ...(options.sandboxNetwork ? { RATATOSKR_SANDBOX_NETWORK: options.sandboxNetwork } : {}),
    ...options.env,
  };
  // Own process group: stop() kills opencode and every tool it spawned; the watchdog does it when
  // this process dies first.
  const child = spawnWatched(SERVE_LAUNCHER, ["--hostname", "127.0.0.1", "--port", String(port)], {
    env: { ...env, OPENCODE_BIN: resolveOpencodeBinary() },
    cwd: rootDir,
    removeOnParentExit: options.removeOnParentExit ?? rootDir,
  });
  running.set(child, rootDir);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", () => running.delete(child));

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      killGroup(child, "SIGCONT"); // a frozen server would not handle SIGTERM
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    }
    killGroup(child, "SIGKILL"); // leftovers of the group (tool subprocesses)
    await rm(rootDir, { recursive: true, force: true });
  };

  try {
    await waitHealthy(url, password, options.startTimeoutMs ?? 30_000, () => child.exitCode !== null || child.signalCode !== null, () => out);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    password,
    rootDir,
    configDir,
    configFile,
    sandboxed: sandbox.sandboxed,
    async makeWorkDir(name) {
      const dir = join(rootDir, "work", `${name}-${randomBytes(3).toString("hex")}`);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    output: () => out,
    processGroup: child.pid!,
    freeze: () => killGroup(child, "SIGSTOP"),
    thaw: () => killGroup(child, "SIGCONT"),
    stop,
  };
}

async function waitHealthy(url: string, password: string, timeoutMs: number, died: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const auth = `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;
  while (Date.now() < deadline) {
    if (died()) throw new Error(`opencode serve exited during start-up:\n${output().slice(-2_000)}`);
    try {
      const res = await fetch(`${url}/global/health`, { headers: { authorization: auth }, signal: AbortSignal.timeout(1_000) });
      if (res.ok && ((await res.json()) as { healthy?: boolean }).healthy) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`opencode serve at ${url} not healthy after ${timeoutMs} ms:\n${output().slice(-2_000)}`);
}
