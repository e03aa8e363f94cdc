import { readFileSync } from "node:fs";
import { describeConfig } from "@ratatoskr/runtime";
import { fullConfigSchema } from "@ratatoskr/service-host";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ALL_SERVICES } from "../../services/all-in-one/src/services.ts";
import { interpolate, references } from "./compose-interpolate.ts";

const TEXT = readFileSync(new URL("../../docker-compose.yml", import.meta.url), "utf8");
const EXAMPLE = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");

interface ComposeService {
  build?: { context?: string };
  networks?: string[];
  security_opt?: string[];
  image?: string;
  pull_policy?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  stop_grace_period?: string;
}

/** What `docker compose config` would see with an operator's filled-in .env. */
const OPERATOR_ENV: Record<string, string> = {
  POSTGRES_PASSWORD: "pg-secret",
  OPENCODE_SERVER_PASSWORD: "oc-secret",
  OPENCODE_MODEL: "anthropic/claude-sonnet-4-5",
  ANTHROPIC_API_KEY: "model-key",
  BULL_BOARD_PASSWORD: "board-secret",
  TELEGRAM_BOT_TOKEN: "bot-token",
  GITEA_TOKEN: "gitea-token",
};
const compose = parse(interpolate(TEXT, OPERATOR_ENV), { merge: true }) as {
  services: Record<string, ComposeService>;
  networks: Record<string, { internal?: boolean } | null>;
};
const services = compose.services;
const appServices = ALL_SERVICES.map((s) => s.name);
const AGENT_WIRING = [
  "OPENCODE_URL",
  "OPENCODE_SERVER_PASSWORD",
  "OPENCODE_MODEL",
  "WORKSPACE_DIR",
  "GITEA_URL",
  "GITEA_TOKEN",
];
const seconds = (d: string) => Number(/^(\d+)s$/.exec(d)?.[1] ?? NaN);

describe("docker-compose.yml", () => {
  it("builds the one image once and runs every service and opencode from it", () => {
    const builders = Object.entries(services).filter(([, s]) => s.build !== undefined);
    expect(builders.map(([name, s]) => [name, s.build?.context])).toEqual([
      ["migrate", "."],
      ["egress", "deploy/egress"],
    ]);
    for (const name of [...appServices, "opencode"]) {
      expect(services[name]?.image, name).toBe(services["migrate"]!.image);
      expect(services[name]?.pull_policy, name).toBe("never");
    }
  });

  it("runs node and opencode directly (the image's tini is PID 1), never through pnpm, tsx or a node_modules/.bin wrapper", () => {
    for (const name of [...appServices, "migrate"]) {
      const command = services[name]!.command!;
      expect(command[0], name).toBe("node");
      expect(command[1], name).toMatch(/\/dist\/.+\.js$/);
    }
    expect(services["opencode"]!.command!.join(" ")).not.toMatch(/node_modules|pnpm|tsx/);
  });

  it("keeps opencode on an internal network whose only way out is the egress proxy", () => {
    const internal = (name: string) => compose.networks[name]?.internal === true;
    expect(services["opencode"]!.networks).toEqual(["agent"]);
    expect(internal("agent")).toBe(true);
    expect(services["egress"]!.networks?.some((n) => !internal(n))).toBe(true);
    const env = services["opencode"]!.environment!;
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"])
      expect(env[name], name).toBe("http://egress:3128");
    // Redis and Postgres sit on an internal network opencode is not on.
    for (const name of ["redis", "postgres"]) {
      expect(services[name]!.networks, name).toEqual(["backend"]);
      expect(internal("backend")).toBe(true);
    }
    // Everyone that talks to opencode shares its network.
    for (const name of [...appServices.filter((n) => n !== "notifier")])
      expect(services[name]!.networks, name).toContain("agent");
    // The tool sandbox (bubblewrap) mounts a /proc of its own.
    expect(services["opencode"]!.security_opt).toEqual(["systempaths=unconfined"]);
  });

  it("gives running jobs longer than SHUTDOWN_TIMEOUT_MS before SIGKILL", () => {
    for (const name of appServices) {
      const timeoutMs = Number(services[name]!.environment!["SHUTDOWN_TIMEOUT_MS"] ?? 30_000);
      expect(seconds(services[name]!.stop_grace_period!) * 1000, name).toBeGreaterThan(timeoutMs);
    }
  });

  it("hands each service only variables it reads, and opencode only the model's", () => {
    for (const definition of ALL_SERVICES) {
      const reads = new Set(describeConfig(fullConfigSchema([definition])).map((v) => v.name));
      // Agent workers all get the agent wiring, whether or not their agent has landed yet.
      if (services[definition.name]!.volumes?.some((v) => v.startsWith("workspaces:")))
        for (const name of AGENT_WIRING) reads.add(name);
      const given = Object.keys(services[definition.name]!.environment!);
      expect(
        given.filter((name) => !reads.has(name)),
        definition.name,
      ).toEqual([]);
    }
    const opencode = services["opencode"]!.environment!;
    for (const secret of [
      "TELEGRAM_BOT_TOKEN",
      "GITEA_TOKEN",
      "BULL_BOARD_PASSWORD",
      "DATABASE_URL",
      "REDIS_URL",
    ])
      expect(opencode, secret).not.toHaveProperty(secret);
    expect(opencode["ANTHROPIC_API_KEY"]).toBe("model-key");
    expect(Object.values(opencode)).not.toContain("bot-token");
    expect(Object.values(opencode)).not.toContain("gitea-token");
  });

  it("wires every service that reads Redis, Postgres, opencode or Telegram to them", () => {
    const wiring = [
      ...AGENT_WIRING,
      "REDIS_URL",
      "DATABASE_URL",
      "TELEGRAM_BOT_TOKEN",
      "BULL_BOARD_PASSWORD",
    ];
    for (const definition of ALL_SERVICES) {
      const reads = describeConfig(fullConfigSchema([definition])).map((v) => v.name);
      const given = services[definition.name]!.environment!;
      expect(
        reads.filter((name) => wiring.includes(name) && !(name in given)),
        definition.name,
      ).toEqual([]);
    }
  });

  it("has no working default password: compose refuses to start until each is set", () => {
    expect(TEXT + EXAMPLE).not.toMatch(/change-?me/i);
    const refs = references(TEXT);
    for (const name of ["POSTGRES_PASSWORD", "OPENCODE_SERVER_PASSWORD", "BULL_BOARD_PASSWORD"]) {
      expect(refs.get(name)?.required, name).toBe(true);
      expect(() => interpolate(TEXT, { ...OPERATOR_ENV, [name]: "" }), name).toThrow(name);
    }
    for (const name of refs.keys())
      expect(EXAMPLE, `${name} is explained in .env.example`).toMatch(new RegExp(`^#? ?${name}=`, "m"));
  });

  it("publishes admin ports on loopback only", () => {
    for (const [name, service] of Object.entries(services))
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:/);
  });

  it("mounts the workspace volume wherever agents work, at WORKSPACE_DIR", () => {
    for (const name of ["analyst", "dev", "reviewer", "postmortem"]) {
      expect(services[name]!.volumes, name).toContain(
        `workspaces:${services[name]!.environment!["WORKSPACE_DIR"]}`,
      );
    }
    expect(services["opencode"]!.volumes).toContain("workspaces:/workspaces");
  });
});
