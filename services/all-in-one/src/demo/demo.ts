import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyMigrations } from "@ratatoskr/db";
import { startHost } from "@ratatoskr/service-host";
import { FakeTelegram, startOpencodeServer, startScriptedModel } from "@ratatoskr/testkit";
import { ALL_SERVICES } from "../services.ts";
import { playDemoConversation, stamp } from "./demo-conversation.ts";
import { branchLogStat, createDemoGitRoot } from "./demo-git.ts";
import { scriptDemoModel } from "./demo-script.ts";
import { demoStyle, summariseLogLine, type DemoStyle } from "./demo-style.ts";
import { holdRunLock, sweepAbandonedDemos } from "./demo-run-lock.ts";
import { checkPortFree, DemoStopped, dropDemoData, Teardown } from "./demo-teardown.ts";

const AGENTS_DIR = fileURLToPath(new URL("../../../../agents/", import.meta.url));
const DEMO_CHAT_ID = 1001;
const BOARD_PASSWORD = "demo";

/**
 * The whole system on one machine with no credentials: the real services and a real
 * `opencode serve`, with the scripted model in place of an LLM, a fake Telegram chat in place of
 * Telegram and a local bare repository in place of a git host. Prints the conversation.
 */
export interface DemoOptions {
  /** Postgres schema and BullMQ prefix of this run (default: `ratatoskr_demo_<id>`, `ratatoskr-demo-<id>`). */
  schema?: string;
  prefix?: string;
  /** Aborting it stops the demo; during start-up, whatever was started so far is stopped. */
  signal?: AbortSignal;
  /** Colours (demoStyle); plain when omitted. */
  style?: DemoStyle;
}

export interface RunningDemo {
  taskId: number;
  /** True when the task ended in success with its branch pushed. */
  succeeded: boolean;
  /** The task branch on the local repository, once pushed. */
  branch: string | null;
  /** The bare repository standing in for the git host (removed on stop). */
  bareRepo: string;
  schema: string;
  prefix: string;
  /** The run's temporary directory (removed on stop). */
  root: string;
  /** Stops everything, removes the temp directories, the run's schema and its queues; true when clean. */
  stop(): Promise<boolean>;
}

/**
 * Runs the demo. Every run has its own schema and queue prefix (two demos at once never touch each
 * other's data) and removes them when it stops. Throws DemoStopped when `signal` aborts first,
 * after stopping what had started.
 */
export async function runDemo(
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  options: DemoOptions = {},
): Promise<RunningDemo> {
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
    const telegram = await teardown.own(new FakeTelegram({ botUsername: "ratatoskr_demo_bot" }).start(), (t) =>
      t.stop(),
    );
    const model = await teardown.own(startScriptedModel(), (m) => m.close());
    scriptDemoModel(model);
    const opencode = await teardown.own(
      // Inside the run's directory, which its watchdog removes if the demo is killed (SIGKILL).
      startOpencodeServer({ provider: { baseUrl: model.url }, agentsDir: AGENTS_DIR, parentDir: root, removeOnParentExit: root }),
      (o) => o.stop(),
    );
    const git = await createDemoGitRoot(join(root, "git"));
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
          TELEGRAM_BOT_TOKEN: telegram.token,
          TELEGRAM_API_ROOT: telegram.url,
          TELEGRAM_ALLOWED_CHAT_IDS: String(DEMO_CHAT_ID),
          OPENCODE_URL: opencode.url,
          OPENCODE_SERVER_PASSWORD: opencode.password,
          OPENCODE_MODEL: `fake/${model.modelId}`,
          WORKSPACE_DIR: join(root, "workspaces"),
          LOCAL_GIT_ROOT: git.root,
        },
      }),
      (h) => h.shutdown("demo stopped"),
    );

    print(
      style.bold(`Ratatoskr demo`) +
        ` — health ${host.url}/health/ready, Bull Board ${host.url}/admin/queues (admin / ${BOARD_PASSWORD})`,
    );
    print(
      style.dim(
        `Scripted model, real opencode ${opencode.url}, local repository ${git.repo}, fake Telegram chat ${DEMO_CHAT_ID}.\n` +
          `This run's schema ${schema}, queue prefix ${prefix}, temporary directory ${root}.`,
      ),
    );
    const startedAt = Date.now();
    const conversation = playDemoConversation({ telegram, chatId: DEMO_CHAT_ID, print, startedAt, style });
    const outcome = await Promise.race([conversation, stopped]);
    const task = await host.context.repos.tasks.findById(outcome.taskId);
    const branch = task?.branch ?? null;
    print(`\n${style.dim(stamp(startedAt))} Task #${outcome.taskId} is "${task?.status}".`);
    if (outcome.succeeded && branch) {
      print(`\nThe branch ${branch} as pushed to ${git.bare} (git log --stat main..${branch}):\n`);
      print((await branchLogStat(git.bare, branch)).trimEnd());
      print(
        `\nLook at it while the demo runs:\n` +
          `  git --git-dir ${git.bare} log -p main..${branch}\n` +
          `  git clone -b ${branch} ${git.bare} hello`,
      );
    } else {
      print(
        `The flow did not reach success; /status ${outcome.taskId} in the chat and Bull Board show where it stopped.`,
      );
    }
    print(`\nThe services keep running (Bull Board ${host.url}/admin/queues); press Ctrl+C to stop.`);
    return {
      taskId: outcome.taskId,
      succeeded: outcome.succeeded,
      branch,
      bareRepo: git.bare,
      schema,
      prefix,
      root,
      stop: () => teardown.run(),
    };
  } catch (err) {
    await teardown.run();
    throw err;
  }
}
