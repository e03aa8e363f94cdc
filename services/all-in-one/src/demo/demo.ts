import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyMigrations } from "@ratatoskr/db";
import { startHost } from "@ratatoskr/service-host";
import { FakeTelegram, startOpencodeServer, startScriptedModel } from "@ratatoskr/testkit";
import pg from "pg";
import { ALL_SERVICES } from "../services.ts";
import { playDemoConversation } from "./demo-conversation.ts";
import { createDemoGitRoot } from "./demo-git.ts";
import { scriptDemoModel } from "./demo-script.ts";

const AGENTS_DIR = fileURLToPath(new URL("../../../../agents/", import.meta.url));
const DEMO_CHAT_ID = 1001;
const DEMO_SCHEMA = "ratatoskr_demo";
const BOARD_PASSWORD = "demo";

/**
 * The whole system on one machine with no credentials: the real services and a real
 * `opencode serve`, with the scripted model in place of an LLM, a fake Telegram chat in place of
 * Telegram and a local bare repository in place of a git host. Prints the conversation.
 */
export async function runDemo(env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  const databaseUrl = env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
  const root = await mkdtemp(join(tmpdir(), "ratatoskr-demo-"));
  // Each demo starts from an empty schema of its own, so the first task is #1.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${DEMO_SCHEMA}" CASCADE`).finally(() => client.end());
  await applyMigrations({ connectionString: databaseUrl, schema: DEMO_SCHEMA });

  const telegram = await new FakeTelegram({ botUsername: "ratatoskr_demo_bot" }).start();
  const model = await startScriptedModel();
  scriptDemoModel(model);
  const opencode = await startOpencodeServer({ provider: { baseUrl: model.url }, agentsDir: AGENTS_DIR });
  const git = await createDemoGitRoot(join(root, "git"));

  const host = await startHost({
    name: "all-in-one",
    services: ALL_SERVICES,
    env: {
      REDIS_URL: "redis://127.0.0.1:6379",
      QUEUE_PREFIX: "ratatoskr-demo",
      HTTP_HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      BULL_BOARD_PASSWORD: BOARD_PASSWORD,
      BOT_LOCALE: "en",
      ...env,
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: DEMO_SCHEMA,
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

  print(`Ratatoskr demo — health ${host.url}/health/ready, Bull Board ${host.url}/admin/queues (admin / ${BOARD_PASSWORD})`);
  print(`Scripted model, real opencode ${opencode.url}, local repository ${git.repo}, fake Telegram chat ${DEMO_CHAT_ID}.`);
  const taskId = await playDemoConversation({ telegram, chatId: DEMO_CHAT_ID, print });
  const task = await host.context.repos.tasks.findById(taskId);
  print(`\nTask #${taskId} is now "${task?.status}". Its dev job is on the queue; watch it in Bull Board.`);
  print("The services keep running; press Ctrl+C to stop.");
}
