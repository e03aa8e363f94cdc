import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createDatabase, type Database } from "@ratatoskr/db";
import {
  FakeGitea,
  FakeTelegram,
  freePort,
  startOwnPostgres,
  startOwnRedis,
  startServiceProcess,
  type OpencodeServer,
  type OwnPostgres,
  type OwnRedis,
  type ScriptedModel,
  type ServiceProcess,
} from "@ratatoskr/testkit";

import { startTelegramProxy, type TelegramProxy } from "./telegram-proxy.ts";

/** What every trial shares: the fakes that are never the subject of a fault. */
export interface Shared {
  model: ScriptedModel;
  opencode: OpencodeServer;
  pgTemplate: string;
  workspace: string;
  logDir: string;
  /** More variables for every service of every world (the CI files' quicker job locks). */
  serviceEnv?: NodeJS.ProcessEnv;
}

export type ServiceName = "ingress" | "analyst" | "notifier" | "dev" | "reviewer" | "postmortem";
/** Every service a world may run, in the report's order. */
export const SERVICES: readonly ServiceName[] = ["ingress", "analyst", "notifier", "dev", "reviewer", "postmortem"];
const DIALOGUE_SERVICES: readonly ServiceName[] = ["ingress", "analyst", "notifier"];

/** The chats a trial may write from (the allowlist of every world). */
export const CHATS = Array.from({ length: 400 }, (_, i) => 5_000 + i);

export interface WorldOptions {
  /** Updates arrive by webhook (Telegram posts to ingress) instead of long polling. */
  webhook?: boolean;
  /**
   * The pipeline after approval too: dev, reviewer and postmortem, and a fake Gitea as the git
   * host and the second front door (its webhook posts to ingress).
   */
  pipeline?: boolean;
}

/**
 * One trial's world: its own redis-server and Postgres, a fake Telegram behind a misbehaving
 * proxy, and ingress, analyst and notifier (with `pipeline`: dev, reviewer, postmortem and a fake
 * Gitea too) as separate processes that can be killed with -9.
 */
export interface World {
  readonly redis: OwnRedis;
  readonly postgres: OwnPostgres;
  readonly telegram: FakeTelegram;
  readonly proxy: TelegramProxy;
  /** Set with `pipeline`: the git host and the Gitea door. */
  readonly gitea: FakeGitea | undefined;
  /** The trial's own reading of the database (for counting, never for driving the services). */
  readonly db: Database;
  /** Set in webhook mode: where ingress takes updates and the secret it expects. */
  readonly webhook: { url: string; secret: string } | undefined;
  service(name: ServiceName): ServiceProcess;
  /** kill -9, then a fresh process (as a supervisor would); resolves once it is started. */
  killAndRestart(name: ServiceName): Promise<{ killedAt: number }>;
  /** kill -9 only. */
  kill(name: ServiceName): Promise<void>;
  start(name: ServiceName): Promise<ServiceProcess>;
  /** Warnings and errors each service logged since the world started (all its processes). */
  warnLines(): Partial<Record<ServiceName, number>>;
  close(): Promise<void>;
}

const WEBHOOK_SECRET = "chaos-webhook-secret";
const GITEA_WEBHOOK_SECRET = "chaos-gitea-webhook-secret";

/** Worlds not closed yet: what an interrupted `pnpm chaos` must still tear down. */
export const openWorlds = new Set<World>();

export async function startWorld(shared: Shared, trial: string, opts: WorldOptions = {}): Promise<World> {
  const [redis, postgres, telegram, gitea] = await Promise.all([
    startOwnRedis(),
    startOwnPostgres(shared.pgTemplate),
    new FakeTelegram().start(),
    opts.pipeline ? new FakeGitea({ token: "chaos-gitea-token" }).start() : undefined,
  ]);
  const services = opts.pipeline ? SERVICES : DIALOGUE_SERVICES;
  const proxy = await startTelegramProxy(telegram.url);
  const db = createDatabase({ connectionString: postgres.url });
  // Idle connections are cut when a trial stops Postgres: that is the trial, not a crash.
  db.pool.on("error", () => undefined);
  // A webhook reaches ingress at one address across its restarts.
  const ingressPort = opts.webhook || gitea ? await freePort() : undefined;
  const webhook = opts.webhook
    ? { url: `http://127.0.0.1:${ingressPort}/telegram/webhook`, secret: WEBHOOK_SECRET }
    : undefined;
  gitea?.addWebhook(`http://127.0.0.1:${ingressPort}/webhooks/gitea`, GITEA_WEBHOOK_SECRET);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    REDIS_URL: redis.url,
    DATABASE_URL: postgres.url,
    QUEUE_PREFIX: "chaos",
    LOG_LEVEL: "info",
    SHUTDOWN_TIMEOUT_MS: "5000",
    BULL_BOARD_DISABLED: "true",
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: proxy.url,
    TELEGRAM_ALLOWED_CHAT_IDS: CHATS.join(","),
    BOT_LOCALE: "en",
    OPENCODE_URL: shared.opencode.url,
    OPENCODE_SERVER_PASSWORD: shared.opencode.password,
    OPENCODE_MODEL: `fake/${shared.model.modelId}`,
    // Task ids start over in every world: so do its workspaces.
    WORKSPACE_DIR: join(shared.workspace, trial),
    STARTUP_TIMEOUT_MS: "120000",
    ...shared.serviceEnv,
    ...(gitea
      ? {
          GITEA_URL: gitea.url,
          GITEA_TOKEN: gitea.token,
          GITEA_WEBHOOK_SECRET: GITEA_WEBHOOK_SECRET,
          GITEA_BOT_LOGIN: gitea.botLogin,
          GITEA_SWEEP_INTERVAL_MS: "0",
        }
      : {}),
  };
  const running = new Map<ServiceName, ServiceProcess>();
  const finished: Array<{ name: ServiceName; output: string }> = [];
  const start = async (name: ServiceName) => {
    const own =
      name !== "ingress" || ingressPort === undefined
        ? {}
        : {
            HTTP_PORT: String(ingressPort),
            ...(webhook ? { TELEGRAM_WEBHOOK_URL: webhook.url, TELEGRAM_WEBHOOK_SECRET: webhook.secret } : {}),
          };
    const process = await startServiceProcess(name, { env: { ...env, ...own }, timeoutMs: 120_000 });
    running.set(name, process);
    return process;
  };
  const kill = async (name: ServiceName) => {
    const process = running.get(name);
    if (!process) return;
    running.delete(name);
    await process.stop("SIGKILL");
    finished.push({ name, output: process.output() });
  };
  const outputs = () => [
    ...finished,
    ...[...running].map(([name, process]) => ({ name, output: process.output() })),
  ];
  try {
    await Promise.all(services.map(start));
  } catch (err) {
    await Promise.all(services.map(kill));
    await Promise.allSettled([db.close(), proxy.close(), telegram.stop(), gitea?.stop(), redis.stop(), postgres.destroy()]);
    throw err;
  }

  const world: World = {
    redis,
    postgres,
    telegram,
    proxy,
    gitea,
    db,
    webhook,
    service(name) {
      const process = running.get(name);
      if (!process) throw new Error(`${name} is not running`);
      return process;
    },
    async killAndRestart(name) {
      await kill(name);
      const killedAt = Date.now();
      await start(name);
      return { killedAt };
    },
    kill,
    start,
    warnLines() {
      const counts: Partial<Record<ServiceName, number>> = {};
      for (const { name, output } of outputs()) counts[name] = (counts[name] ?? 0) + countWarnings(output);
      return counts;
    },
    async close() {
      openWorlds.delete(world);
      await Promise.all(services.map(kill));
      const dir = join(shared.logDir, trial);
      await mkdir(dir, { recursive: true });
      await Promise.all(
        finished.map((f, i) => writeFile(join(dir, `${String(i).padStart(2, "0")}-${f.name}.log`), f.output)),
      );
      await Promise.allSettled([db.close(), proxy.close(), telegram.stop(), gitea?.stop()]);
      await Promise.allSettled([redis.stop(), postgres.destroy()]);
    },
  };
  openWorlds.add(world);
  return world;
}

const WARN_LEVELS = new Set<unknown>(["warn", "error", "fatal", 40, 50, 60]);

/** pino lines at warn or above (levels logged as labels or numbers). */
export function countWarnings(output: string): number {
  let count = 0;
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      if (WARN_LEVELS.has((JSON.parse(line) as { level?: unknown }).level)) count += 1;
    } catch {
      // a partial line at the end
    }
  }
  return count;
}
