import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { kustomize, podSpec, type Manifest, type PodContainer } from "../k8s-manifests.ts";
import { kubeSubset, type KubeSubset } from "./kube-subset.ts";
import { containerTestsSkipReason, inspect, logs, podman, waitFor } from "./podman.ts";

/**
 * k8s/ played with `podman kube play`: what podman 4.3 can run of it (see kube-subset.ts for
 * what it cannot: Services, Secrets, Jobs, StatefulSets as such, NetworkPolicies, KEDA). The
 * workloads start first and wait in their init containers; then the migration runs, and every
 * pod starts and passes its readiness probe.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/**
 * podman 4.3 cannot go on with a pod whose init container has run ("cannot remove container …
 * as it is running"), so each Deployment's init containers run as a pod of their own (its gate,
 * kube-subset.ts) and the Deployment is played once its gate has exited 0.
 */
const SKIP = containerTestsSkipReason("k8s/ on podman kube play");
const DEPLOYMENTS = ["ingress", "notifier", "analyst", "dev", "reviewer", "postmortem"];

type Probe = {
  httpGet?: { path: string; port: number | string };
  exec?: { command: string[] };
  tcpSocket?: { port: number | string };
};
type Container = PodContainer & {
  readinessProbe?: Probe;
  ports?: Array<{ name?: string; containerPort: number }>;
};

let dir: string;
let network: string;
let subset: KubeSubset;
const played: string[] = [];

/** podman names a Deployment's pod `<name>-pod-0` and a container `<pod>-<container>`. */
const podOf = (o: { kind: string; metadata: { name: string } }) =>
  o.kind === "Deployment" ? `${o.metadata.name}-pod-0` : o.metadata.name;

/** `podman kube play` of some objects, with the ConfigMaps given as podman wants them (--configmap). */
function play(name: string, docs: object[]): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, docs.map((d) => stringify(d)).join("---\n"));
  played.push(file);
  return podman(["kube", "play", "--network", network, "--configmap", join(dir, "configmaps.yaml"), file]);
}

/** Runs a container's readinessProbe the way the kubelet would, from inside its pod. */
async function ready(container: string, c: Container): Promise<boolean> {
  const probe = c.readinessProbe!;
  const port = (p: number | string) =>
    typeof p === "number" ? p : c.ports!.find((x) => x.name === p)!.containerPort;
  const command = probe.exec
    ? probe.exec.command
    : probe.httpGet
      ? [
          "node",
          "-e",
          `fetch("http://127.0.0.1:${port(probe.httpGet.port)}${probe.httpGet.path}").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`,
        ]
      : ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port(probe.tcpSocket!.port)}`];
  return podman(["exec", container, ...command]).then(
    () => true,
    () => false,
  );
}

describe.skipIf(SKIP !== undefined)(`k8s/ on podman kube play${SKIP ? ` — skipped: ${SKIP}` : ""}`, () => {
  const objects = () => subset.workloads as Manifest[];
  const specOf = (o: Manifest) => (o.kind === "Pod" ? o.spec : podSpec(o)) as { containers: Container[] };
  // ingress runs as the pod its Service names (kube-subset.ts), the others as Deployments.
  const deployments = () =>
    objects().filter(
      (o) => (o.kind === "Deployment" || o.kind === "Pod") && DEPLOYMENTS.includes(o.metadata.name),
    );
  const probed = () =>
    objects()
      .filter((o) => o.kind === "Deployment" || o.kind === "Pod")
      .flatMap((o) =>
        specOf(o)
          .containers.filter((c) => c.readinessProbe)
          .map((c) => ({ name: `${podOf(o)}-${c.name}`, c })),
      );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ratatoskr-kube-"));
    network = `ratatoskr-kube-${randomBytes(3).toString("hex")}`;
    await podman(["network", "create", network]);
    const secret = () => randomBytes(12).toString("hex");
    const postgres = secret();
    const token = `7654321:${secret()}`;
    subset = kubeSubset(kustomize(`${ROOT}k8s`), {
      images: {
        "registry.example.com/ratatoskr:latest":
          process.env["RATATOSKR_IMAGE"] ?? "localhost/ratatoskr:local",
        "registry.example.com/ratatoskr-egress:latest": "localhost/ratatoskr-egress:local",
        "postgres:16-alpine": process.env["POSTGRES_IMAGE"] ?? "postgres:16-alpine",
        "redis:7-alpine": process.env["REDIS_IMAGE"] ?? "redis:7-alpine",
      },
      secrets: {
        POSTGRES_PASSWORD: postgres,
        DATABASE_URL: `postgresql://ratatoskr:${postgres}@postgres:5432/ratatoskr`,
        TELEGRAM_BOT_TOKEN: token,
        BULL_BOARD_PASSWORD: secret(),
        OPENCODE_SERVER_PASSWORD: secret(),
        ANTHROPIC_API_KEY: secret(),
      },
      // The fake Telegram stands in for api.telegram.org; nothing here reaches outside.
      config: { TELEGRAM_API_ROOT: "http://telegram:8080", TELEGRAM_ALLOWED_CHAT_IDS: "1001" },
      sidecarEnv: { OPENCODE_DISABLE_MODELS_FETCH: "1", RATATOSKR_SANDBOX: "off" },
      extra: [
        {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "telegram" },
          spec: {
            containers: [
              {
                name: "telegram",
                image: process.env["TESTKIT_IMAGE"] ?? "localhost/ratatoskr-testkit:local",
                imagePullPolicy: "IfNotPresent",
                env: [
                  { name: "FAKE", value: "telegram" },
                  { name: "TELEGRAM_BOT_TOKEN", value: token },
                ],
              },
            ],
          },
        },
      ],
    });
    console.log(`podman kube play: what was changed or left out\n- ${subset.changes.join("\n- ")}`);
    const all = subset.workloads as Manifest[];
    const configMaps = all.filter((o) => o.kind === "ConfigMap");
    writeFileSync(join(dir, "configmaps.yaml"), configMaps.map((d) => stringify(d)).join("---\n"));
    // What the Deployments need first (podman 4.3 runs a pod's init containers before it goes on).
    await play(
      "backends",
      all.filter((o) => o.kind !== "ConfigMap" && !DEPLOYMENTS.includes(o.metadata.name)),
    );
  }, 180_000);

  afterAll(async () => {
    for (const file of played.reverse()) await podman(["kube", "down", file]).catch(() => "");
    const volumes = (await podman(["volume", "ls", "-q"]).catch(() => ""))
      .split("\n")
      .filter((v) => /-(redis|postgres)$/.test(v));
    if (volumes.length > 0) await podman(["volume", "rm", "-f", ...volumes]).catch(() => "");
    await podman(["network", "rm", "-f", network]).catch(() => "");
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("holds every Deployment in its init container until the migrations are applied, then starts it and passes its readiness probe", async () => {
    const gateOf = (o: Manifest) => `${o.metadata.name}-gate`;
    const diagnose = async () =>
      (
        await Promise.all(
          deployments().flatMap((o) =>
            [`${gateOf(o)}-wait-for-migrations`, `${podOf(o)}-${o.metadata.name}`].map(
              async (c) => `--- ${c}\n${(await logs(c).catch(() => "")).slice(-1500)}`,
            ),
          ),
        )
      ).join("\n");
    await waitFor(
      "postgres is ready",
      async () =>
        (await ready("postgres-postgres", probed().find((p) => p.name === "postgres-postgres")!.c))
          ? true
          : undefined,
      120_000,
      diagnose,
    );
    // Every Deployment's init containers (its gate) run against the unmigrated database and wait.
    const gated = deployments().filter((o) => subset.gates.has(o.metadata.name));
    expect(gated.map((o) => o.metadata.name).sort()).toEqual([...DEPLOYMENTS].sort());
    for (const o of gated) await play(gateOf(o), [subset.gates.get(o.metadata.name)!]);
    for (const o of gated) {
      const init = `${gateOf(o)}-wait-for-migrations`;
      await waitFor(`${init} waits for the migrations`, async () => ((await logs(init)).includes("is not migrated") ? true : undefined), 120_000, diagnose);
      expect((await inspect(init)).State.Status, init).toBe("running");
    }

    await play("migration", [subset.migration]);
    const migrate = await waitFor(
      "the migration pod exits 0",
      async () => {
        const state = await inspect("ratatoskr-migrate-migrate");
        return state.State.Status === "exited" && state.State.ExitCode === 0 ? state : undefined;
      },
      120_000,
      async () => logs("ratatoskr-migrate-migrate"),
    );
    expect(await logs("ratatoskr-migrate-migrate")).toMatch(/applied \d+_/);
    // Each gate lets its Deployment go once the migrations are in: it exits 0, and only then is
    // the Deployment played (one after another: podman races itself when plays overlap).
    for (const o of deployments()) {
      if (subset.gates.has(o.metadata.name)) {
        const init = `${gateOf(o)}-wait-for-migrations`;
        await waitFor(`${init} exits 0`, async () => {
          const state = await inspect(init);
          return state.State.Status === "exited" && state.State.ExitCode === 0 ? true : undefined;
        }, 120_000, diagnose);
      }
      await play(o.metadata.name, [o]);
    }

    for (const { name, c } of probed())
      await waitFor(
        `${name} passes its readiness probe`,
        async () => ((await ready(name, c)) ? true : undefined),
        180_000,
        diagnose,
      );
    const migrated = Date.parse(migrate.State.FinishedAt);
    for (const o of deployments()) {
      const started = Date.parse((await inspect(`${podOf(o)}-${o.metadata.name}`)).State.StartedAt);
      expect(started, o.metadata.name).toBeGreaterThanOrEqual(migrated - 1000);
    }
    // The agent workers' opencode sidecars run the real binary, under tini.
    for (const o of deployments().filter((o) => specOf(o).containers.some((c) => c.name === "opencode"))) {
      const comm = await podman([
        "exec",
        `${podOf(o)}-opencode`,
        "sh",
        "-c",
        "cat /proc/1/comm; cat /proc/[0-9]*/comm | sort -u",
      ]);
      expect(comm.split("\n")[0], o.metadata.name).toBe("tini");
      expect(comm, o.metadata.name).toMatch(/^opencode$/m);
    }
  }, 600_000);
});
