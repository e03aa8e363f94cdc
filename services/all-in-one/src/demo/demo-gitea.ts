import { join } from "node:path";
import { FakeGitea } from "@ratatoskr/testkit";
import { stamp } from "./demo-conversation.ts";
import { scriptGiteaDemoModel } from "./demo-gitea-script.ts";
import { playGiteaDemo } from "./demo-gitea-play.ts";
import { HELLO_SERVER } from "./demo-script.ts";
import { BOARD_PASSWORD, startDemoStack, type DemoOptions, type DemoRun } from "./demo-stack.ts";

const REPO = "demo/hello";
const PERSON = "alice";
const WEBHOOK_SECRET = "demo-webhook-secret";

/** `bareRepo`: the fake Gitea's repository of `demo/hello`. */
export interface RunningGiteaDemo extends DemoRun {
  issue: number;
  /** The `/agent implement` command. */
  taskId: number;
  /** True when implement ended in success with its PR opened. */
  succeeded: boolean;
  prUrl: string | null;
  branch: string | null;
}

/**
 * The Gitea demo (`pnpm demo gitea`): a fake Gitea (its API, signed webhooks and git over smart
 * HTTP) in place of a Gitea server, around the real system (see startDemoStack). A person opens an
 * issue and comments `/agent plan`, then `/agent implement`; every comment and status-comment
 * edit is printed. Throws DemoStopped when `signal` aborts first, after stopping what had started.
 */
export async function runGiteaDemo(
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  options: DemoOptions = {},
): Promise<RunningGiteaDemo> {
  const stack = await startDemoStack(env, print, options, {
    async start(root, teardown) {
      const gitea = await teardown.own(new FakeGitea({ gitRoot: join(root, "git") }).start(), (g) => g.stop());
      await gitea.createRepo(REPO, {
        "README.md": "# hello\n\nA tiny service for the Ratatoskr demo.\n",
        "server.js": HELLO_SERVER,
      });
      gitea.setPermission(REPO, PERSON, "write");
      return {
        fakes: { gitea },
        env: {
          GITEA_URL: gitea.url,
          GITEA_TOKEN: gitea.token,
          GITEA_WEBHOOK_SECRET: WEBHOOK_SECRET,
          GITEA_BOT_LOGIN: gitea.botLogin,
          // Status comments are edited as commands move on; the clock-only refresh would drown them.
          GITEA_STATUS_REFRESH_MS: "0",
        },
      };
    },
    script: scriptGiteaDemoModel,
  });
  const { host, style, teardown, fakes: { gitea } } = stack;
  try {
    gitea.addWebhook(`${host.url}/webhooks/gitea`, WEBHOOK_SECRET);
    print(
      style.bold(`Ratatoskr demo — the Gitea door`) +
        ` — health ${host.url}/health/ready, Bull Board ${host.url}/admin/queues (admin / ${BOARD_PASSWORD})`,
    );
    print(
      style.dim(
        `Scripted model, real opencode ${stack.opencodeUrl}, fake Gitea ${gitea.url} with ${REPO} (git over HTTP), @${PERSON} may write.\n` +
          `This run's schema ${stack.schema}, queue prefix ${stack.prefix}, temporary directory ${stack.root}.`,
      ),
    );
    const startedAt = Date.now();
    const play = playGiteaDemo({
      gitea,
      repo: REPO,
      person: PERSON,
      tasks: host.context.repos.tasks,
      commandOf: async (commentId) =>
        (await host.context.db.prisma.task.findFirst({ where: { commentId }, select: { id: true } }))?.id,
      print,
      startedAt,
      style,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const outcome = await Promise.race([play, stack.stopped]);
    const task = await host.context.repos.tasks.findById(outcome.taskId);
    print(`\n${style.dim(stamp(startedAt))} Command #${outcome.taskId} is "${task?.status}".`);
    if (outcome.succeeded && outcome.branch) {
      print(
        `\nThe pull request ${outcome.prUrl} is open from ${outcome.branch}. Look at it while the demo runs:\n` +
          `  git --git-dir ${gitea.bareDir(REPO)} log -p main..${outcome.branch}`,
      );
    } else {
      print(`The flow did not reach a pull request; the status comments above and Bull Board show where it stopped.`);
    }
    print(`\nThe services keep running (Bull Board ${host.url}/admin/queues); press Ctrl+C to stop.`);
    return {
      ...outcome,
      bareRepo: gitea.bareDir(REPO),
      schema: stack.schema,
      prefix: stack.prefix,
      root: stack.root,
      stop: () => teardown.run(),
    };
  } catch (err) {
    await teardown.run();
    throw err;
  }
}
