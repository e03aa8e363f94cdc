import { reply, startTestOpencode, type OpencodeServer, type ScriptedModel } from "@ratatoskr/testkit";
import { createOpencodeClient, type OpencodeClient, type OpencodeLogger } from "../../src/index.ts";

export const JUDGE_PROMPT = "You are the JUDGE test agent. Answer with a strict JSON verdict.";
export const DEV_PROMPT = "You are the DEV test agent. Change files in the working directory.";

export interface OpencodeFixture {
  model: ScriptedModel;
  server: OpencodeServer;
  client: OpencodeClient;
  warnings: Array<{ data: Record<string, unknown>; message: string }>;
  /** Debug notices of the client (permission answers, retries). */
  notices: string[];
  /** A directory shared by tests that do not look at files (a fresh location costs opencode ~1.5 s). */
  sharedDir: string;
  stop(): Promise<void>;
}

/**
 * One scripted model + one real opencode serve + one client, for a test file: the vitest worker's
 * shared server unless `own` (a file that freezes it).
 */
export async function startOpencodeFixture(options: { own?: boolean } = {}): Promise<OpencodeFixture> {
  const { model, opencode: server } = await startTestOpencode({
    models: ["scripted", "other"],
    agents: {
      judge: { prompt: JUDGE_PROMPT, permission: { edit: "deny", bash: "deny" } },
      dev: { prompt: DEV_PROMPT, permission: { edit: "allow", bash: "ask" } },
    },
    ...options,
  });
  const warnings: OpencodeFixture["warnings"] = [];
  const notices: string[] = [];
  const logger: OpencodeLogger = {
    warn: (data, message) => warnings.push({ data, message }),
    debug: (_data, message) => notices.push(message),
  };
  const client = createOpencodeClient({ baseUrl: server.url, password: server.password, configFile: server.configFile, logger });
  const running = server;
  const sharedDir = await running.makeWorkDir("shared");
  return {
    notices,
    sharedDir,
    model,
    server: running,
    client,
    warnings,
    async stop() {
      await client.close();
      await running.stop();
      await model.close();
    },
  };
}

/**
 * Runs one quick turn in the shared directory, so a test's time budget goes to its own turn and
 * not to opencode booting the location (seconds on a loaded machine).
 */
export async function warmSharedDir(fx: OpencodeFixture): Promise<void> {
  const m = marker("warm");
  fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("warm")] });
  const result = await fx.client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: m, policy: {}, idleTimeoutMs: 30_000, hardTimeoutMs: 60_000 });
  if (result.outcome !== "ok") throw new Error(`warming the shared directory failed: ${result.error?.message}`);
}

let seq = 0;
/** A marker unique within the test process, to route a prompt to its test's rule. */
export function marker(name: string): string {
  return `[[${name}-${process.pid}-${++seq}]]`;
}
