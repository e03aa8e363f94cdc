/**
 * What sits behind a webhook bench's server, in a child process so the measured process serves
 * requests only: the fake Telegram, or the fake Gitea plus an ingress host running the intake
 * worker (authorizing each accepted command against the fake Gitea, as in production).
 * argv[2] is a BackendConfig as JSON; it answers with a BackendReady message and stops when its
 * IPC channel closes.
 */
import { startHost, type RunningHost } from "../../packages/service-host/src/index.ts";
import { FakeGitea, FakeTelegram } from "../../packages/testkit/src/index.ts";
import { ingressService } from "../../services/ingress/src/index.ts";
import { giteaIngressEnv } from "./ingress-env.ts";

export type BackendConfig =
  | { kind: "telegram" }
  | { kind: "gitea"; schema: string; prefix: string; secret: string; repo: string; hookUrl: string };

export interface BackendReady {
  ready: true;
  url: string;
  token: string;
  /** Gitea: one real delivery (sent to `hookUrl`), the template of every bench delivery. */
  template?: Record<string, unknown>;
}

async function main(config: BackendConfig): Promise<() => Promise<void>> {
  if (config.kind === "telegram") {
    const fake = await new FakeTelegram().start();
    process.send?.({ ready: true, url: fake.url, token: fake.token } satisfies BackendReady);
    return () => fake.stop();
  }
  const gitea = await new FakeGitea().start();
  gitea.addRepo(config.repo);
  gitea.setPermission(config.repo, "alice", "write");
  const issue = gitea.addIssue(config.repo, "bench");
  gitea.addWebhook(config.hookUrl, config.secret);
  const { deliveries } = await gitea.comment(config.repo, issue.number ?? 1, "alice", "/agent plan bench");
  const template = JSON.parse(deliveries[0]?.body ?? "{}") as Record<string, unknown>;
  const intake: RunningHost = await startHost({
    name: "ingress-intake",
    services: [ingressService],
    env: giteaIngressEnv({ ...config, giteaUrl: gitea.url, token: gitea.token, intake: true }),
    handleSignals: false,
  });
  process.send?.({ ready: true, url: gitea.url, token: gitea.token, template } satisfies BackendReady);
  return async () => {
    await intake.shutdown("bench done");
    await gitea.stop();
  };
}

const stopping = main(JSON.parse(process.argv[2] ?? "{}") as BackendConfig);
stopping.catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
process.on("disconnect", () => {
  void stopping.then((stop) => stop()).finally(() => process.exit(0));
});
