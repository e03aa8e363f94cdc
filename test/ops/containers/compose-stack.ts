import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { inspect, logs, podman, type ContainerState } from "./podman.ts";

const exec = promisify(execFile);

/**
 * docker-compose.yml brought up by podman-compose as a user would, in a project of its own. The
 * compose file is copied into a scratch directory first, so a developer's own `.env` beside it in
 * the checkout (which podman-compose would read) cannot change what the test runs.
 */
export class ComposeStack {
  readonly dir: string;
  readonly services: string[];
  private readonly files: string[];

  constructor(
    readonly project: string,
    composeFile: string,
    overrides: string[],
    readonly env: Record<string, string>,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `${project}-`));
    copyFileSync(composeFile, join(this.dir, "docker-compose.yml"));
    this.files = [join(this.dir, "docker-compose.yml"), ...overrides];
    this.services = this.files.flatMap((file) =>
      Object.keys(
        (parse(readFileSync(file, "utf8"), { merge: true }) as { services?: object }).services ?? {},
      ),
    );
  }

  /** Writes a file into the stack's scratch directory; returns its path. */
  write(name: string, text: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, text);
    return path;
  }

  /** `podman-compose -p <project> -f … <args>`, with the stack's environment (the operator's .env). */
  async compose(args: readonly string[]): Promise<string> {
    const fileArgs = this.files.flatMap((file) => ["-f", file]);
    try {
      const { stdout, stderr } = await exec("podman-compose", ["-p", this.project, ...fileArgs, ...args], {
        cwd: this.dir,
        env: { PATH: process.env["PATH"], HOME: process.env["HOME"], ...this.env },
        maxBuffer: 64 << 20,
      });
      return stdout + stderr;
    } catch (error) {
      const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`podman-compose ${args.join(" ")}: ${message}\n${stdout ?? ""}${stderr ?? ""}`);
    }
  }

  container(service: string): string {
    return `${this.project}_${service}_1`;
  }

  state(service: string): Promise<ContainerState> {
    return inspect(this.container(service));
  }

  logs(service: string): Promise<string> {
    return logs(this.container(service));
  }

  /** Runs the service's compose healthcheck once (podman runs none by itself without systemd). */
  async healthy(service: string): Promise<boolean> {
    return podman(["healthcheck", "run", this.container(service)]).then(
      () => true,
      () => false,
    );
  }

  /** `127.0.0.1:<port>` a container port is published on. */
  async published(service: string, port: number): Promise<string> {
    return (await podman(["port", this.container(service), String(port)])).trim().split("\n")[0]!;
  }

  /** Each service's status and the end of its log: what a failure message needs. */
  async diagnose(): Promise<string> {
    const parts = await Promise.all(
      this.services.map(async (service) => {
        const state = await this.state(service).catch(() => undefined);
        const tail = (await this.logs(service).catch(() => "")).split("\n").slice(-15).join("\n");
        return `--- ${service}: ${state ? `${state.State.Status} (exit ${state.State.ExitCode}, restarts ${state.RestartCount})` : "absent"}\n${tail}`;
      }),
    );
    return parts.join("\n");
  }

  /** Removes the containers, volumes and networks (podman-compose 1.0.3 leaves the networks). */
  async down(): Promise<void> {
    await this.compose(["down", "-v", "-t", "5"]).catch(() => "");
    const networks = (
      await podman(["network", "ls", "-q", "--filter", `label=io.podman.compose.project=${this.project}`])
    ).trim();
    if (networks) await podman(["network", "rm", "-f", ...networks.split("\n")]).catch(() => "");
    rmSync(this.dir, { recursive: true, force: true });
  }
}
