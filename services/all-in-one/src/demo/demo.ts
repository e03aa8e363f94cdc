import { join } from "node:path";
import { FakeTelegram } from "@ratatoskr/testkit";
import { playDemoConversation, stamp } from "./demo-conversation.ts";
import { branchLogStat, createDemoGitRoot } from "./demo-git.ts";
import { scriptDemoModel } from "./demo-script.ts";
import { BOARD_PASSWORD, startDemoStack, type DemoOptions, type DemoRun } from "./demo-stack.ts";

export type { DemoOptions } from "./demo-stack.ts";

const DEMO_CHAT_ID = 1001;

export interface RunningDemo extends DemoRun {
  taskId: number;
  /** True when the task ended in success with its branch pushed. */
  succeeded: boolean;
  /** The task branch on the local repository, once pushed. */
  branch: string | null;
}

/**
 * The Telegram demo (`pnpm demo`): a fake Telegram chat in place of Telegram and a local bare
 * repository in place of a git host, around the real system (see startDemoStack). Prints the
 * conversation. Throws DemoStopped when `signal` aborts first, after stopping what had started.
 */
export async function runDemo(
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  options: DemoOptions = {},
): Promise<RunningDemo> {
  const stack = await startDemoStack(env, print, options, {
    async start(root, teardown) {
      const telegram = await teardown.own(new FakeTelegram({ botUsername: "ratatoskr_demo_bot" }).start(), (t) => t.stop());
      const git = await createDemoGitRoot(join(root, "git"));
      return {
        fakes: { telegram, git },
        env: {
          TELEGRAM_BOT_TOKEN: telegram.token,
          TELEGRAM_API_ROOT: telegram.url,
          TELEGRAM_ALLOWED_CHAT_IDS: String(DEMO_CHAT_ID),
          LOCAL_GIT_ROOT: git.root,
        },
      };
    },
    script: scriptDemoModel,
  });
  const { host, style, teardown, fakes: { telegram, git } } = stack;
  try {
    print(
      style.bold(`Ratatoskr demo`) +
        ` — health ${host.url}/health/ready, Bull Board ${host.url}/admin/queues (admin / ${BOARD_PASSWORD})`,
    );
    print(
      style.dim(
        `Scripted model, real opencode ${stack.opencodeUrl}, local repository ${git.repo}, fake Telegram chat ${DEMO_CHAT_ID}.\n` +
          `This run's schema ${stack.schema}, queue prefix ${stack.prefix}, temporary directory ${stack.root}.`,
      ),
    );
    const startedAt = Date.now();
    const conversation = playDemoConversation({ telegram, chatId: DEMO_CHAT_ID, print, startedAt, style });
    const outcome = await Promise.race([conversation, stack.stopped]);
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
