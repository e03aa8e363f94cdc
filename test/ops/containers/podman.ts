import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";

const exec = promisify(execFile);

/**
 * Why the container tests do not run here, or undefined when they do. They need root, podman and
 * the images `scripts/containers.sh ci` builds; `.ci/run` runs them once at its end with
 * RATATOSKR_CONTAINER_TESTS=1. A newcomer's `pnpm test` skips them with this line.
 */
export function containerTestsSkipReason(what: string): string | undefined {
  if (process.env["RATATOSKR_CONTAINER_TESTS"] === "1") return undefined;
  const reason =
    "needs root, podman and the images of `scripts/containers.sh ci`; .ci/run runs it (RATATOSKR_CONTAINER_TESTS=1)";
  console.log(`${what} skipped: ${reason}`);
  return reason;
}

/** Runs podman; resolves with its stdout, rejects with its stderr in the message. */
export async function podman(args: readonly string[], options: { input?: string } = {}): Promise<string> {
  if (options.input !== undefined) {
    return execFileSync("podman", args, { input: options.input, encoding: "utf8", maxBuffer: 64 << 20 });
  }
  try {
    const { stdout } = await exec("podman", [...args], { maxBuffer: 64 << 20 });
    return stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`podman ${args.join(" ")}: ${stderr?.trim() || message}`);
  }
}

/** What `podman inspect` says of a container, the fields the tests read. */
export interface ContainerState {
  Name: string;
  RestartCount: number;
  State: { Status: string; ExitCode: number; StartedAt: string; FinishedAt: string };
  Config: { Env: string[]; Labels: Record<string, string> };
  NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
}

export async function inspect(container: string): Promise<ContainerState> {
  return (JSON.parse(await podman(["inspect", "--type", "container", container])) as ContainerState[])[0]!;
}

/** Both of a container's output streams, as `podman logs` gives them. */
export async function logs(container: string): Promise<string> {
  const { stdout, stderr } = await exec("podman", ["logs", container], { maxBuffer: 64 << 20 });
  return stdout + stderr;
}

/** Polls `probe` until it returns a value, or fails after `timeoutMs` saying what and why. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  diagnose: () => Promise<string> = async () => "",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms ${last}\n${await diagnose()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Podman's timestamps (`2026-12-02 01:02:03.456789 +0000 UTC` or RFC 3339) in epoch ms. */
export function epochMs(podmanTime: string): number {
  const iso = podmanTime.replace(/^(\S+) (\S+) ([+-]\d{2})(\d{2}) \S+$/, "$1T$2$3:$4");
  return Date.parse(iso);
}

/** What `podman image inspect` says of an image, the fields the tests read. */
export interface ImageConfig {
  Size: number;
  Config: { User: string; Entrypoint: string[]; Cmd: string[]; Env: string[] };
}

export async function inspectImage(image: string): Promise<ImageConfig> {
  return (JSON.parse(await podman(["image", "inspect", image])) as ImageConfig[])[0]!;
}
