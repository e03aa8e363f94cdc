import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { applyMigrations } from "@ratatoskr/db";
import { freePort } from "../opencode-server/free-port.ts";

/**
 * A Postgres cluster of a test's (or chaos trial's) own on a free port, never the shared one on 5432:
 * stopped, started and thrown away at will. initdb refuses root, so every server command runs as the
 * `postgres` user; clusters are copied from a template made once per run (initdb is slow).
 */
export interface OwnPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/chaos`, migrated. */
  readonly url: string;
  /** Fast shutdown: open connections are cut, as when the server goes away. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its data directory. */
  destroy(): Promise<void>;
}

const run = promisify(execFile);
const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const asPostgres = (command: string, args: string[]) =>
  run("runuser", ["-u", "postgres", "--", command, ...args], { timeout: 60_000 });

async function postgresDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o777);
  return dir;
}

/** Runs initdb once; `startOwnPostgres` copies the result. Returns the template's directory. */
export async function makePostgresTemplate(): Promise<{ dir: string; remove(): Promise<void> }> {
  const root = await postgresDir("ratatoskr-chaos-pg-");
  const dir = join(root, "template");
  await asPostgres(join(BIN, "initdb"), ["-D", dir, "--auth=trust", "--no-sync", "-U", "postgres", "-E", "UTF8"]);
  return { dir, remove: () => rm(root, { recursive: true, force: true }) };
}

export async function startOwnPostgres(templateDir: string): Promise<OwnPostgres> {
  const root = await postgresDir("ratatoskr-chaos-pg-");
  const data = join(root, "data");
  await asPostgres("cp", ["-a", templateDir, data]);
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = async () => {
    await asPostgres(join(BIN, "pg_ctl"), ["-D", data, "-o", options, "-l", join(root, "log"), "-w", "start"]);
  };
  const stop = async () => {
    await asPostgres(join(BIN, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]).catch(() => undefined);
  };
  await start();
  const admin = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  await asPostgres(join(BIN, "psql"), ["-d", admin, "-qc", "CREATE DATABASE chaos"]);
  const url = `postgresql://postgres@127.0.0.1:${port}/chaos`;
  await applyMigrations({ connectionString: url, schema: "public" });
  return {
    url,
    stop,
    start,
    async destroy() {
      await stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}
