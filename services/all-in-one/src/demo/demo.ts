import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyMigrations } from "@ratatoskr/db";
import { startHost } from "@ratatoskr/service-host";
import { FakeTelegram, startOpencodeServer, startScriptedModel } from "@ratatoskr/testkit";
import { Redis } from "ioredis";
import pg from "pg";
import { ALL_SERVICES } from "../services.ts";
import { playDemoConversation, stamp } from "./demo-conversation.ts";
import { branchLogStat, createDemoGitRoot } from "./demo-git.ts";
import { scriptDemoModel } from "./demo-script.ts";

const AGENTS_DIR = fileURLToPath(new URL("../../../../agents/", import.meta.url));
const DEMO_CHAT_ID = 1001;
const DEMO_SCHEMA = "ratatoskr_demo";
const DEMO_PREFIX = "ratatoskr-demo";
const BOARD_PASSWORD = "demo";

async function deleteRedisKeys(url: string, pattern: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    for await (const keys of redis.scanStream({ match: pattern, count: 500 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * The whole system on one machine with no credentials: the real services and a real
 * `opencode serve`, with the scripted model in place of an LLM, a fake Telegram chat in place of
 * Telegram and a local bare repository in place of a git host. Prints the conversation.
 */
export interface DemoOptions {
  /** Postgres schema and BullMQ prefix the demo owns and resets (tests pass their own). */
  schema?: string;
  prefix?: string;
  /** Stop on SIGTERM/SIGINT (the command line); tests stop it themselves. */
  handleSignals?: boolean;
}

export interface RunningDemo {
  taskId: number;
  /** True when the task ended in success with its branch pushed. */
  succeeded: boolean;
  /** The task branch on the local repository, once pushed. */
  branch: string | null;
  /** The bare repository standing in for the git host (removed on stop). */
  bareRepo: string;
  stop(): Promise<void>;
}

export async function runDemo(
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  options: DemoOptions = {},
): Promise<RunningDemo> {
  const schema = options.schema ?? DEMO_SCHEMA;
  const prefix = options.prefix ?? DEMO_PREFIX;
  const databaseUrl = env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
  const redisUrl = env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const root = await mkdtemp(join(tmpdir(), "ratatoskr-demo-"));
  // Each demo starts from an empty schema of its own, so the first task is #1.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
  // Job ids are derived from database ids, so the previous demo's jobs must go with its schema.
  await deleteRedisKeys(redisUrl, `${prefix}:*`);
  await applyMigrations({ connectionString: databaseUrl, schema });

  const telegram = await new FakeTelegram({ botUsername: "ratatoskr_demo_bot" }).start();
  const model = await startScriptedModel();
  scriptDemoModel(model);
  const opencode = await startOpencodeServer({ provider: { baseUrl: model.url }, agentsDir: AGENTS_DIR });
  const git = await createDemoGitRoot(join(root, "git"));

  const host = await startHost({
    handleSignals: options.handleSignals ?? true,
    name: "all-in-one",
    services: ALL_SERVICES,
    env: {
      QUEUE_PREFIX: prefix,
      HTTP_HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      BULL_BOARD_PASSWORD: BOARD_PASSWORD,
      BOT_LOCALE: "en",
      ...env,
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
  });
  host.context.shutdown.register("telemetry", "demo stand-ins", async () => {
    await Promise.allSettled([telegram.stop(), opencode.stop(), model.close()]);
    await rm(root, { recursive: true, force: true });
  });

  print(
    `Ratatoskr demo — health ${host.url}/health/ready, Bull Board ${host.url}/admin/queues (admin / ${BOARD_PASSWORD})`,
  );
  print(
    `Scripted model, real opencode ${opencode.url}, local repository ${git.repo}, fake Telegram chat ${DEMO_CHAT_ID}.`,
  );
  const startedAt = Date.now();
  const stop = async () => void (await host.shutdown("demo stopped"));
  let outcome;
  try {
    outcome = await playDemoConversation({ telegram, chatId: DEMO_CHAT_ID, print, startedAt });
  } catch (err) {
    await stop();
    throw err;
  }
  const task = await host.context.repos.tasks.findById(outcome.taskId);
  const branch = task?.branch ?? null;
  print(`\n${stamp(startedAt)} Task #${outcome.taskId} is "${task?.status}".`);
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
  return { taskId: outcome.taskId, succeeded: outcome.succeeded, branch, bareRepo: git.bare, stop };
}
