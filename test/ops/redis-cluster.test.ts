import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { Cluster } from "ioredis";
import { QUEUE } from "@ratatoskr/contracts";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import {
  FakeGitea,
  FakeTelegram,
  startTestOpencode,
  type OpencodeServer,
  type ScriptedModel,
} from "@ratatoskr/testkit";
import { agentOpencodeEnv, createTestDatabase, type TestDatabase } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ALL_SERVICES } from "../../services/all-in-one/src/services.ts";
import { scriptBackupDialogue } from "../support/backup-dialogue.ts";

/**
 * The all-in-one on a real 3-master Redis Cluster (started by `.ci/run` through
 * scripts/redis-cluster.sh): one person's request from /start to an approved task and its dev job.
 */
const NODES = process.env.REDIS_CLUSTER_TEST_NODES?.split(",").filter(Boolean) ?? [];
const SKIP_REASON =
  "REDIS_CLUSTER_TEST_NODES is not set (run scripts/redis-cluster.sh and export its output)";
const AGENTS_DIR = fileURLToPath(new URL("../../agents/", import.meta.url));
const CHAT = 4242;
const REPLY_MS = 30_000;

const [first, ...rest] = NODES;
const prefix = `{t_${randomBytes(6).toString("hex")}}`;
let database: TestDatabase;
let telegram: FakeTelegram;
let gitea: FakeGitea;
let model: ScriptedModel;
let opencode: OpencodeServer;
let workspace: string;
let host: RunningHost;
let cluster: Cluster;

function clusterEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    REDIS_URL: `redis://${first}`,
    REDIS_CLUSTER_NODES: rest.join(","),
    QUEUE_PREFIX: prefix,
    DATABASE_URL: database.connectionString,
    DATABASE_SCHEMA: database.schema,
    HTTP_HOST: "127.0.0.1",
    HTTP_PORT: "0",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    BULL_BOARD_DISABLED: "true",
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.url,
    TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT),
    BOT_LOCALE: "en",
    ...agentOpencodeEnv(opencode, model),
    WORKSPACE_DIR: workspace,
    GITEA_URL: gitea.url,
    GITEA_TOKEN: gitea.token,
    ...extra,
  };
}

/** Every key under this file's prefix, from every master. */
async function clusterKeys(): Promise<string[]> {
  const keys: string[] = [];
  for (const node of cluster.nodes("master")) {
    for await (const batch of node.scanStream({ match: `${prefix}:*`, count: 500 }) as AsyncIterable<
      string[]
    >)
      keys.push(...batch);
  }
  return keys;
}

describe.skipIf(NODES.length === 0)(
  `Redis Cluster${NODES.length === 0 ? ` — skipped: ${SKIP_REASON}` : ""}`,
  () => {
    beforeAll(async () => {
      workspace = await mkdtemp(join(tmpdir(), "ratatoskr-cluster-"));
      let agents;
      [database, telegram, gitea, agents] = await Promise.all([
        createTestDatabase(),
        new FakeTelegram().start(),
        new FakeGitea().start(),
        startTestOpencode({ agentsDir: AGENTS_DIR, claims: [workspace] }),
      ]);
      ({ model, opencode } = agents);
      gitea.addRepo("acme/shop");
      cluster = new Cluster(NODES.map((n) => ({ host: n.split(":")[0]!, port: Number(n.split(":")[1]) })));
      host = await startHost({
        name: "all-in-one",
        services: ALL_SERVICES,
        env: clusterEnv(),
        handleSignals: false,
      });
    }, 120_000);

    afterAll(async () => {
      await host?.shutdown("test done");
      await Promise.allSettled([telegram?.stop(), gitea?.stop(), opencode?.stop(), model?.close()]);
      if (cluster) {
        const keys = await clusterKeys();
        // One hash tag, one slot: the keys can be removed in one command.
        if (keys.length > 0) await cluster.unlink(...keys);
        cluster.disconnect();
      }
      await database?.drop();
      if (workspace) await rm(workspace, { recursive: true, force: true });
    });

    it("refuses a prefix without a hash tag on a cluster, naming the variable and an example", async () => {
      const start = startHost({
        name: "all-in-one",
        services: ALL_SERVICES,
        env: clusterEnv({ QUEUE_PREFIX: "ratatoskr" }),
        handleSignals: false,
      });
      await expect(start).rejects.toThrow(
        /QUEUE_PREFIX must be hash-tagged on a Redis Cluster.*\{ratatoskr\}/,
      );
    });

    it("takes a Telegram request from /start through a question and a draft to approval and a dev job", async () => {
      // Ready on the cluster (a loaded machine may need a few probes for opencode to answer).
      await vi.waitFor(
        async () => {
          const ready = await fetch(`${host.url}/health/ready`);
          expect({ status: ready.status, body: await ready.json() }).toMatchObject({
            status: 200,
            body: { checks: { redis: "ok", postgres: "ok", opencode: "ok" } },
          });
        },
        { timeout: REPLY_MS, interval: 500 },
      );
      scriptBackupDialogue(model);
      const messages = async (count: number) =>
        telegram.waitForMessages(CHAT, (_r, all) => all.length >= count, {
          timeoutMs: REPLY_MS,
          kind: "sent",
        });

      telegram.sendText(CHAT, "/start");
      const [greeting] = await messages(1);
      const taskId = Number(/#(\d+)/.exec(greeting!.plainText)?.[1]);
      expect(taskId).toBeGreaterThan(0);

      telegram.sendText(CHAT, "Please add a backup job to our shop");
      expect((await messages(2))[1]!.plainText).toContain("Which database?");

      telegram.sendText(CHAT, "postgres, nightly");
      const draft = (await messages(3))[2]!;
      expect(draft.plainText).toContain("Nightly database backup");
      expect(draft.replyMarkup?.inline_keyboard.flat().map((b) => b.callback_data)).toEqual([
        `approve:${taskId}`,
        `edit:${taskId}`,
        `cancel:${taskId}`,
      ]);

      telegram.sendText(CHAT, "создавай");
      expect((await messages(4))[3]!.plainText).toContain(`#${taskId}`);
      const approvals = await database.db.prisma.taskEvent.findMany({
        where: { taskId, type: "user.approved" },
      });
      expect(approvals.map((e) => [e.fromStatus, e.toStatus])).toEqual([["ready", "approved"]]);

      const devQueue = new Queue(QUEUE.dev, { connection: cluster, prefix });
      try {
        const jobs = await devQueue.getJobs(["waiting", "active", "completed", "failed", "delayed"]);
        expect(jobs.filter((j) => j.data.taskId === taskId).map((j) => j.data.kind)).toEqual(["implement"]);
      } finally {
        await devQueue.close();
      }
      // The queues live on the cluster, every key in the prefix's one slot.
      const keys = await clusterKeys();
      expect(keys.length).toBeGreaterThan(0);
      const slots = new Set(await Promise.all(keys.map((k) => cluster.cluster("KEYSLOT", k))));
      expect(slots.size).toBe(1);
    }, 90_000);
  },
);
