import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { serviceEntryArgs, SERVICES_CWD } from "./service-entry.ts";

export interface ServiceProcess {
  readonly name: string;
  /** Health/metrics server address, from the service's "started" log line. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote so far (pino JSON lines), for assertions and failure messages. */
  output(): string;
  /** Sends the signal and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartServiceProcessOptions {
  /** The service's environment; HTTP_PORT defaults to 0 (a free port), HTTP_HOST is loopback. */
  env: NodeJS.ProcessEnv;
  /** How long to wait for the "started" log line (default 30 s). */
  timeoutMs?: number;
  /** Run this instead of the service's entry ({@link serviceEntryArgs}): a built image, say. */
  command?: { file: string; args: string[]; cwd: string };
}

function parseLogLine(line: string): { msg?: string; url?: string } | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    return JSON.parse(line) as { msg?: string; url?: string };
  } catch {
    return undefined;
  }
}

/**
 * Runs `services/<name>`'s entry as its own Node process (from the test run's build, else from
 * source under tsx; no intermediate process, so signals reach the service itself) and waits until
 * it reports it has started.
 */
export async function startServiceProcess(name: string, opts: StartServiceProcessOptions): Promise<ServiceProcess> {
  const command = opts.command ?? { file: process.execPath, args: serviceEntryArgs(name), cwd: SERVICES_CWD };
  const child = spawn(command.file, command.args, {
    cwd: command.cwd,
    env: { ...opts.env, HTTP_HOST: "127.0.0.1", HTTP_PORT: opts.env.HTTP_PORT ?? "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);

  const url = await new Promise<string>((resolve, reject) => {
    const deadline = setTimeout(() => finish(new Error(`${name} did not start within ${opts.timeoutMs ?? 30_000} ms`)), opts.timeoutMs ?? 30_000);
    const onData = () => {
      const complete = output.slice(0, output.lastIndexOf("\n") + 1);
      for (const line of complete.split("\n")) {
        const entry = parseLogLine(line);
        if (entry?.msg === "started" && entry.url) return finish(null, entry.url);
      }
    };
    const onExit = (code: number | null) => finish(new Error(`${name} exited with ${code} before starting`));
    function finish(err: Error | null, value?: string) {
      clearTimeout(deadline);
      child.stdout!.off("data", onData);
      child.off("exit", onExit);
      if (err) reject(new Error(`${err.message}\n--- ${name} output ---\n${output}`));
      else resolve(value!);
    }
    child.stdout!.on("data", onData);
    child.once("exit", onExit);
  }).catch(async (err: unknown) => {
    child.kill("SIGKILL");
    await exited;
    throw err;
  });

  return {
    name,
    url,
    child,
    output: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
