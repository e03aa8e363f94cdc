import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyMigrations } from "@ratatoskr/db";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import { startOpencodeServer, startScriptedModel, type ScriptedModel } from "@ratatoskr/testkit";
import { ALL_SERVICES } from "../services.ts";
import { holdRunLock, sweepAbandonedDemos } from "./demo-run-lock.ts";
import { demoStyle, summariseLogLine, type DemoStyle } from "./demo-style.ts";
import { checkPortFree, DemoStopped, dropDemoData, Teardown } from "./demo-teardown.ts";

const AGENTS_DIR = fileURLToPath(new URL("../../../../agents/", import.meta.url));
export const BOARD_PASSWORD = "demo";

export interface DemoOptions {
  /** Postgres schema and BullMQ prefix of this run (default: `ratatoskr_demo_<id>`, `ratatoskr-demo-<id>`). */
  schema?: string;
  prefix?: string;
  /** Aborting it stops the demo; during start-up, whatever was started so far is stopped. */
  signal?: AbortSignal;
  /** Colours (demoStyle); plain when omitted. */
  style?: DemoStyle;
}

/** What every demo run returns, beside its door's outcome. */
export interface DemoRun {
  /** The bare repository standing in for the git host (removed on stop). */
  bareRepo: string;
  schema: string;
  prefix: string;
  /** The run's temporary directory (removed on stop). */
  root: string;
  /** Stops everything, removes the temp directories, the run's schema and its queues; true when clean. */
  stop(): Promise<boolean>;
}

/** What a door's demo adds to the stack: its fakes (owned by the teardown) and the services' env for them. */
export interface DemoDoor<Fakes> {
  /** Starts the door's fakes in the run's directory, with the env that points the services at them. */
  start(root: string, teardown: Teardown): Promise<{ fakes: Fakes; env: NodeJS.ProcessEnv }>;
  /** The scripted model's answers for this door's story. */
  script(model: ScriptedModel): void;
}

export interface DemoStack<Fakes> {
  fakes: Fakes;
  schema: string;
  prefix: string;
  root: string;
  style: DemoStyle;
  host: RunningHost;
  opencodeUrl: string;
  teardown: Teardown;
  /** Rejects with DemoStopped once the demo is asked to stop: race it against the story. */
  stopped: Promise<never>;
}

/**
 * The whole system on one machine with no credentials: the real services in one host and a real
 * `opencode serve` with the scripted model in place of an LLM; the door brings its fake (Telegram
 * or Gitea). Every run has its own schema and queue prefix (two demos at once never touch each
 * other's data), removed when it stops. Throws DemoStopped when `signal` aborts during start-up,
 * after stopping what had started.
 */
export async function startDemoStack<Fakes>(
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  options: DemoOptions,
  door: DemoDoor<Fakes>,
): Promise<DemoStack<Fakes>> {
  const id = randomBytes(4).toString("hex");
  const schema = options.schema ?? `ratatoskr_demo_${id}`;
  const prefix = options.prefix ?? `ratatoskr-demo-${id}`;
  const style = options.style ?? demoStyle(false);
  const databaseUrl = env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
  const redisUrl = env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const httpHost = env.HTTP_HOST ?? "127.0.0.1";
  await checkPortFree(httpHost, Number(env.HTTP_PORT ?? "8080"));

  const teardown = new Teardown(options.signal);
  const stopped = new Promise<never>((_, reject) => {
    if (options.signal?.aborted) reject(new DemoStopped());
    options.signal?.addEventListener("abort", () => reject(new DemoStopped()), { once: true });
  });
  stopped.catch(() => undefined);
  try {
    const swept = await sweepAbandonedDemos(databaseUrl, redisUrl);
    if (swept.length > 0) print(style.dim(`Removed the data of demo runs that were killed: ${swept.join(", ")}.`));
    await teardown.own(holdRunLock(databaseUrl, schema), (lock) => lock.release());
    const root = await teardown.own(mkdtemp(join(tmpdir(), "ratatoskr-demo-")), (dir) =>
      rm(dir, { recursive: true, force: true }),
    );
    await teardown.own(applyMigrations({ connectionString: databaseUrl, schema }), () =>
      dropDemoData(databaseUrl, redisUrl, schema, prefix),
    );
    const { fakes, env: doorEnv } = await door.start(root, teardown);
    const model = await teardown.own(startScriptedModel(), (m) => m.close());
    door.script(model);
    const opencode = await teardown.own(
      // Inside the run's directory, which its watchdog removes if the demo is killed (SIGKILL).
      startOpencodeServer({ provider: { baseUrl: model.url }, agentsDir: AGENTS_DIR, parentDir: root, removeOnParentExit: root }),
      (o) => o.stop(),
    );
    const host = await teardown.own(
      startHost({
        handleSignals: false, // the demo's command line owns the signals (demo-cli.ts)
        name: "all-in-one",
        services: ALL_SERVICES,
        logDestination: {
          write: (line: string) => {
            const summary = summariseLogLine(line, style);
            if (summary) print(summary);
          },
        },
        env: {
          QUEUE_PREFIX: prefix,
          HTTP_HOST: httpHost,
          LOG_LEVEL: "error",
          BULL_BOARD_PASSWORD: BOARD_PASSWORD,
          BOT_LOCALE: "en",
          ...env,
          LOG_FORMAT: "json", // read by summariseLogLine, never shown as JSON
          REDIS_URL: redisUrl,
          DATABASE_URL: databaseUrl,
          DATABASE_SCHEMA: schema,
          OPENCODE_URL: opencode.url,
          OPENCODE_SERVER_PASSWORD: opencode.password,
          OPENCODE_MODEL: `fake/${model.modelId}`,
          WORKSPACE_DIR: join(root, "workspaces"),
          ...doorEnv,
        },
      }),
      (h) => h.shutdown("demo stopped"),
    );
    return { fakes, schema, prefix, root, style, host, opencodeUrl: opencode.url, teardown, stopped };
  } catch (err) {
    await teardown.run();
    throw err;
  }
}
