import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** deploy/opencode of this repository (the same depth below packages/testkit from src/ and dist/). */
const DEPLOY_OPENCODE = fileURLToPath(new URL("../../../../deploy/opencode/", import.meta.url));

/** Starts `opencode serve` with the tool sandbox and in its own PID namespace (deploy/opencode/serve). */
export const SERVE_LAUNCHER = join(DEPLOY_OPENCODE, "serve");
/** The shell every bash tool call runs in (deploy/opencode/sandbox/bash). */
export const SANDBOX_SHELL = join(DEPLOY_OPENCODE, "sandbox", "bash");

/**
 * How a test server runs its agents' tools:
 * - `auto` (default): sandboxed when bubblewrap works here, else unsandboxed (explicit opt-out
 *   `RATATOSKR_SANDBOX=off`), so a machine without bwrap still runs the suite; with
 *   `RATATOSKR_REQUIRE_SANDBOX=1` (CI) `auto` is `required`;
 * - `required`: sandboxed, or the server does not start;
 * - `off`: unsandboxed (commands still start from an empty environment).
 */
export type ToolSandboxMode = "auto" | "required" | "off";

let probed: { ok: boolean; why: string } | undefined;

/**
 * Whether the sandbox shell can run a command on this machine: it runs `true` through the real
 * shell once per process (bwrap missing, no namespaces, … all show here) and says why not.
 */
export function toolSandboxSupport(): { ok: boolean; why: string } {
  if (probed) return probed;
  const root = mkdtempSync(join(tmpdir(), "ratatoskr-sandbox-probe-"));
  const dir = join(root, "task");
  try {
    mkdirSync(dir);
    const run = spawnSync(SANDBOX_SHELL, ["-c", "true"], {
      cwd: dir,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", RATATOSKR_SANDBOX_ROOTS: root },
      encoding: "utf8",
      timeout: 10_000,
    });
    const why = (run.stderr || run.error?.message || `exit ${run.status}`).trim().split("\n")[0] ?? "";
    probed = run.status === 0 ? { ok: true, why: "" } : { ok: false, why };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return probed;
}

let warned = false;
function warnOnce(line: string): void {
  if (warned) return;
  warned = true;
  console.error(`[testkit] ${line}`);
}

/** CI sets RATATOSKR_REQUIRE_SANDBOX=1: a machine where the sandbox cannot run fails instead of skipping. */
export function sandboxRequired(): boolean {
  return process.env["RATATOSKR_REQUIRE_SANDBOX"] === "1";
}

/** The opencode.json keys and environment that put a server's tools in the sandbox. */
export function toolSandboxSetup(
  mode: ToolSandboxMode,
  /** Patterns of the directories that hold session directories (RATATOSKR_SANDBOX_ROOTS). */
  roots: readonly string[],
): { config: Record<string, unknown>; env: Record<string, string>; sandboxed: boolean } {
  const config = { shell: SANDBOX_SHELL };
  const env: Record<string, string> = { SHELL: SANDBOX_SHELL, RATATOSKR_SANDBOX_ROOTS: roots.join(":") };
  const unsandboxed = { ...env, RATATOSKR_SANDBOX: "off", RATATOSKR_OPENCODE_ISOLATION: "off" };
  if (mode === "auto" && sandboxRequired()) mode = "required";
  if (mode === "off") return { config, env: unsandboxed, sandboxed: false };
  const support = toolSandboxSupport();
  if (support.ok) return { config, env, sandboxed: true };
  if (mode === "required") throw new Error(`the tool sandbox cannot run here: ${support.why}`);
  warnOnce(`agent commands in tests run unsandboxed: ${support.why} (apt-get install bubblewrap)`);
  return { config, env: unsandboxed, sandboxed: false };
}
