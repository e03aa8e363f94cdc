import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { buildOpencodeConfig } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComposeStack } from "./compose-stack.ts";
import { containerTestsSkipReason, epochMs, podman, waitFor } from "./podman.ts";

/**
 * docker-compose.yml as users run it, with podman-compose: the real image, Postgres, Redis,
 * opencode behind its egress proxy and the six services, each in its own container, and the
 * outside world as containers of the test image (fake Telegram, fake Gitea serving git over HTTP
 * with a token, the scripted model). A person's request goes in through Telegram and comes out
 * as a pushed branch; then `compose stop` drains the stack.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SKIP = containerTestsSkipReason("docker-compose.yml on podman-compose");
const APP = ["ingress", "analyst", "dev", "reviewer", "postmortem", "notifier"];
const GRACE_S = 40; // stop_grace_period of the services in docker-compose.yml
const CHAT = 1001;

const secret = () => randomBytes(12).toString("hex");
const SECRETS = {
  postgres: secret(),
  opencode: secret(),
  model: secret(),
  bullBoard: secret(),
  telegram: `7654321:${secret()}`,
  gitea: secret(),
};
type SecretName = keyof typeof SECRETS;

/** The secrets each container is meant to hold, and so the only ones it may. */
const OWN: Record<string, SecretName[]> = {
  postgres: ["postgres"],
  redis: [],
  migrate: ["postgres"],
  egress: [],
  opencode: ["model", "opencode"],
  ingress: ["postgres", "telegram", "bullBoard", "gitea", "opencode"],
  analyst: ["postgres", "opencode", "gitea"],
  dev: ["postgres", "opencode", "gitea"],
  reviewer: ["postgres", "opencode", "gitea"],
  postmortem: ["postgres", "opencode"],
  notifier: ["postgres", "telegram", "gitea"],
};

let stack: ComposeStack;
let upMs = 0;

describe.skipIf(SKIP !== undefined)(
  `docker-compose.yml on podman-compose${SKIP ? ` — skipped: ${SKIP}` : ""}`,
  () => {
    beforeAll(async () => {
      stack = new ComposeStack(
        `ratatoskr-compose-${randomBytes(3).toString("hex")}`,
        `${ROOT}docker-compose.yml`,
        [`${ROOT}test/ops/containers/compose.test.yml`],
        {
          // What an operator's .env holds.
          POSTGRES_PASSWORD: SECRETS.postgres,
          OPENCODE_SERVER_PASSWORD: SECRETS.opencode,
          ANTHROPIC_API_KEY: SECRETS.model,
          BULL_BOARD_PASSWORD: SECRETS.bullBoard,
          TELEGRAM_BOT_TOKEN: SECRETS.telegram,
          GITEA_TOKEN: SECRETS.gitea,
          OPENCODE_MODEL: "fake/scripted",
          TELEGRAM_API_ROOT: "http://telegram:8080",
          TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT),
          GITEA_URL: "http://gitea:8080",
          INGRESS_PUBLISH: "127.0.0.1:",
          // The model provider here is the scripted model's container (on 8080); the npm registry
          // stays allowed, as for real.
          EGRESS_ALLOWED_DOMAINS: "model,registry.npmjs.org",
          EGRESS_ALLOWED_PORTS: "443 80 8080",
          // The images scripts/containers.sh built (stand-ins for the official bases here).
          ...pick(process.env, [
            "RATATOSKR_IMAGE",
            "TESTKIT_IMAGE",
            "REDIS_IMAGE",
            "POSTGRES_IMAGE",
            "NODE_IMAGE",
            "DEBIAN_IMAGE",
          ]),
          TEST_CHAT_ID: String(CHAT),
        },
      );
      const provider = { baseUrl: "http://model:8080/v1" };
      const config = buildOpencodeConfig(provider, "{env:OPENCODE_MODEL}") as {
        provider: { fake: { options: { apiKey: string } } };
      };
      config.provider.fake.options.apiKey = "{env:ANTHROPIC_API_KEY}"; // the model key reaches the model
      stack.env["TEST_OPENCODE_CONFIG"] = stack.write("opencode.json", JSON.stringify(config));

      const started = Date.now();
      await stack.compose(["up", "-d", "--no-build"]);
      await waitFor(
        "migrate exits 0 and every service is healthy",
        async () => {
          const migrate = await stack.state("migrate");
          if (migrate.State.Status !== "exited" || migrate.State.ExitCode !== 0) return undefined;
          for (const service of ["redis", "postgres", ...APP])
            if (!(await stack.healthy(service))) return undefined;
          return true;
        },
        240_000,
        () => stack.diagnose(),
      );
      upMs = Date.now() - started;
      console.log(`compose stack up and healthy in ${(upMs / 1000).toFixed(1)} s`);
    }, 300_000);

    afterAll(async () => {
      await stack?.down();
    }, 120_000);

    it("applies the migrations before any service starts for good", async () => {
      const migrated = epochMs((await stack.state("migrate")).State.FinishedAt);
      for (const service of APP) {
        const state = await stack.state(service);
        expect({ service, startedAfterMigrate: epochMs(state.State.StartedAt) >= migrated - 1000 }).toEqual({
          service,
          startedAfterMigrate: true,
        });
      }
    });

    it("takes a person's Telegram request through the containers to a pushed branch on the git host", async () => {
      const telegram = `http://${await stack.published("telegram", 9000)}`;
      const gitea = `http://${await stack.published("gitea", 9000)}`;
      const started = Date.now();
      expect((await fetch(`${telegram}/conversation`, { method: "POST" })).status).toBe(200);
      const conversation = await waitFor(
        "the conversation ends",
        async () => {
          const state = (await (await fetch(`${telegram}/conversation`)).json()) as Conversation;
          return state.state === "running" ? undefined : state;
        },
        300_000,
        () => stack.diagnose(),
      );
      console.log(
        `compose flow: request to pushed branch in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(conversation.state, `${conversation.error}\n${conversation.transcript.join("\n")}`).toBe("done");
      expect(conversation.outcome?.succeeded, conversation.transcript.join("\n")).toBe(true);

      const branch = /Branch: (\S+)/.exec(conversation.outcome!.final)?.[1];
      const refs = (await (await fetch(`${gitea}/refs?repo=demo/hello`)).json()) as Array<{
        ref: string;
        sha: string;
      }>;
      expect(refs.map((r) => r.ref).sort()).toEqual(["refs/heads/main", `refs/heads/${branch}`].sort());
      const file = (await (
        await fetch(`${gitea}/file?repo=demo/hello&ref=${encodeURIComponent(branch!)}&path=server.js`)
      ).json()) as { text: string };
      expect(file.text).toContain('JSON.stringify({ status: "ok" })');
      // The services talked to Gitea with the bot's token, as against a real one.
      const calls = (await (await fetch(`${gitea}/api-requests`)).json()) as Array<{ authorized: boolean }>;
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((c) => c.authorized)).toBe(true);
    }, 330_000);

    it("hands each container only its own secrets", async () => {
      const held: Record<string, SecretName[]> = {};
      for (const service of Object.keys(OWN)) {
        const env = (await stack.state(service)).Config.Env.join("\n");
        held[service] = (Object.keys(SECRETS) as SecretName[]).filter((name) =>
          env.includes(SECRETS[name].split(":").at(-1)!),
        );
      }
      const sorted = (map: Record<string, SecretName[]>) =>
        Object.fromEntries(Object.entries(map).map(([service, names]) => [service, [...names].sort()]));
      expect(sorted(held)).toEqual(sorted(OWN));
      const opencode = (await stack.state("opencode")).Config.Env.map((e) => e.split("=")[0]);
      for (const name of [
        "DATABASE_URL",
        "REDIS_URL",
        "TELEGRAM_BOT_TOKEN",
        "GITEA_TOKEN",
        "BULL_BOARD_PASSWORD",
      ])
        expect(opencode).not.toContain(name);
    });

    it("runs an agent's command in the tool sandbox inside the opencode container, where it sees no secret", async () => {
      // As opencode runs a bash tool call: its shell, in a task directory, with opencode's environment.
      const script = [
        "mkdir -p /workspaces/compose-test/tasks/probe && cd /workspaces/compose-test/tasks/probe",
        'RATATOSKR_SANDBOX_ROOTS=\'/workspaces/*/tasks\' /app/deploy/opencode/sandbox/bash -c \'env; cat /proc/1/environ | tr "\\0" "\\n"; echo pid1=$(cat /proc/1/comm); ls /proc | grep -c "^[0-9]"\'',
      ].join(" && ");
      const out = await podman(["exec", stack.container("opencode"), "bash", "-c", script]);
      expect(out).toContain("pid1=");
      for (const name of Object.keys(SECRETS) as SecretName[])
        expect(out, name).not.toContain(SECRETS[name].split(":").at(-1)!);
      expect(out).not.toMatch(/OPENCODE_SERVER_PASSWORD|ANTHROPIC_API_KEY/);
    });

    it("lets the agent's container reach the model and the registry through the proxy, and nothing else", async () => {
      const probe = (mode: "proxy" | "direct", url: string) =>
        podman(["exec", "-i", stack.container("opencode"), "node", "-", mode, url], { input: PROBE }).then(
          (out) => out.trim(),
        );
      // Through the egress proxy: the model provider and the git host are allowed, others refused.
      expect(await probe("proxy", "http://model:8080/v1/models")).toBe("200");
      expect(await probe("proxy", "http://gitea:8080/api/v1/version")).toBe("401");
      expect(await probe("proxy", "http://telegram:8080/")).toBe("403");
      // Around the proxy, nothing: no name resolves, no route leads out.
      for (const host of ["telegram", "model", "redis", "postgres"])
        expect(await probe("direct", `http://${host}:8080/`)).toBe("ENOTFOUND");
      expect(await probe("direct", "https://registry.npmjs.org/is-number")).toMatch(
        /ENETUNREACH|EHOSTUNREACH|ETIMEDOUT|TIMEOUT/,
      );
      // A package registry on the allowlist, over HTTPS through the proxy, as an agent's npm does it.
      const version = await podman([
        "exec",
        "-w",
        "/tmp",
        stack.container("opencode"),
        "npm",
        "view",
        "is-number@7.0.0",
        "version",
      ]);
      expect(version.trim().split("\n").at(-1)).toBe("7.0.0");
      const refused = (await stack.logs("egress"))
        .split("\n")
        .filter((line) => line.includes("TCP_DENIED/403"));
      expect(refused.some((line) => line.includes("http://telegram:8080/"))).toBe(true);
    }, 60_000);

    it("drains on `compose stop`: every service logs its clean shutdown and exits 0 within its grace period", async () => {
      const stopping = Date.now();
      await stack.compose(["stop", "-t", String(GRACE_S)]);
      for (const service of APP) {
        const state = await stack.state(service);
        const log = await stack.logs(service);
        const tookS = (epochMs(state.State.FinishedAt) - stopping) / 1000;
        const finished = log.split("\n").find((line) => line.includes('"msg":"shutdown finished"'));
        const result = {
          service,
          exit: state.State.ExitCode,
          clean: finished ? (JSON.parse(finished) as { clean: boolean }).clean : false,
        };
        expect(result, log.split("\n").slice(-12).join("\n")).toEqual({ service, exit: 0, clean: true });
        expect(tookS, service).toBeLessThan(GRACE_S);
      }
      // opencode ends on the SIGTERM itself (128 + 15), not on the SIGKILL after the grace period.
      expect((await stack.state("opencode")).State.ExitCode).toBe(143);
    }, 120_000);
  },
);

interface Conversation {
  state: "idle" | "running" | "done" | "failed";
  transcript: string[];
  outcome?: { taskId: number; final: string; succeeded: boolean };
  error: string;
}

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (env[name] ? [[name, env[name]!]] : [])));
}

/** Run inside the opencode container with node: one request, direct or through the egress proxy; prints the status or the error code. */
const PROBE = `
const [mode, target] = process.argv.slice(2);
const url = new URL(target);
const lib = require(url.protocol === "https:" && mode === "direct" ? "https" : "http");
const options = mode === "proxy"
  ? { host: "egress", port: 3128, path: target, headers: { Host: url.host } }
  : { host: url.hostname, port: url.port || (url.protocol === "https:" ? 443 : 80), path: url.pathname };
const req = lib.get({ ...options, timeout: 8000 }, (res) => { console.log(res.statusCode); res.resume(); });
req.on("timeout", () => { console.log("TIMEOUT"); req.destroy(); });
req.on("error", (error) => console.log(error.code || error.message));
`;
