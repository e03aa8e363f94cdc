import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { QUEUE } from "@ratatoskr/contracts";
import { createMetrics } from "@ratatoskr/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import {
  kustomize,
  podSpec,
  schemaProblem,
  secretsRead,
  type Manifest,
  type PodContainer,
} from "./k8s-manifests.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const K8S = `${ROOT}k8s`;
const WORKERS: Record<string, string> = {
  analyst: QUEUE.analyst,
  dev: QUEUE.dev,
  reviewer: QUEUE.review,
  postmortem: QUEUE.postmortem,
  notifier: QUEUE.notify,
};

let objects: Manifest[];
const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
const named = (kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const config = () => (named("ConfigMap", "ratatoskr-config") as { data: Record<string, string> }).data;
/** The Deployments that run Ratatoskr's own image (every one but the egress proxy). */
const ownDeployments = () => byKind("Deployment").filter((o) => o.metadata.name !== "egress");

/** Effective value of a variable in a container: its own env first, then its envFrom sources. */
function envValue(container: PodContainer, name: string): string | undefined {
  const own = container.env?.find((e) => e.name === name);
  if (own) return own.value;
  for (const from of container.envFrom ?? []) {
    const source = from.configMapRef
      ? (named("ConfigMap", from.configMapRef.name) as { data?: Record<string, string> } | undefined)?.data
      : (named("Secret", from.secretRef!.name) as { stringData?: Record<string, string> } | undefined)
          ?.stringData;
    if (source && name in source) return source[name];
  }
  return undefined;
}

/** `kubectl kustomize` renders k8s/; a machine without kubectl skips these checks, saying so. */
const NO_KUBECTL = spawnSync("kubectl", ["version", "--client"], { stdio: "ignore" }).status !== 0;
if (NO_KUBECTL) console.log("k8s/ checks skipped: they need kubectl (`kubectl kustomize` renders k8s/)");

describe.skipIf(NO_KUBECTL)(
  `k8s/ (kubectl kustomize)${NO_KUBECTL ? " — skipped: needs kubectl to render k8s/" : ""}`,
  () => {
    beforeAll(() => {
      objects = kustomize(K8S);
    });

    it("renders objects that each pass their Kubernetes or KEDA schema", async () => {
      expect(objects.length).toBeGreaterThan(20);
      const problems = await Promise.all(
        objects.map(async (o) => [`${o.kind}/${o.metadata.name}`, await schemaProblem(o)] as const),
      );
      expect(problems.filter(([, problem]) => problem !== undefined)).toEqual([]);
      for (const o of objects.filter((o) => o.kind !== "Namespace"))
        expect(o.metadata.namespace).toBe("ratatoskr");
    });

    it("has a schema check that refuses a broken object", async () => {
      const deployment = structuredClone(named("Deployment", "dev")!);
      podSpec(deployment)!.containers[0]!.args = "node services/dev/dist/main.js" as unknown as string[];
      expect(await schemaProblem(deployment)).toMatch(/args must be array/);
      expect(await schemaProblem({ ...deployment, kind: "Deploymnet" })).toMatch(/no schema/);
    });

    it("runs node and opencode's binary directly under the image's tini, never pnpm, tsx or a .bin wrapper, from the one image", () => {
      for (const o of [...ownDeployments(), ...byKind("Job")]) {
        const pod = podSpec(o)!;
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          const where = `${o.metadata.name}/${c.name}`;
          expect({ where, command: c.command }).toEqual({ where, command: undefined });
          expect(c.image, where).toBe("registry.example.com/ratatoskr:latest");
          const program = c.args?.[0] ?? "";
          expect(["node", "deploy/opencode/serve"], where).toContain(program);
          expect(c.args?.join(" "), where).not.toMatch(/pnpm|tsx/);
          const file = c.args?.[1] ?? "";
          if (program === "node")
            expect(
              existsSync(`${ROOT}${file.replace("/dist/", "/src/").replace(/\.js$/, ".ts")}`) ||
                existsSync(`${ROOT}${file}`),
              where,
            ).toBe(true);
        }
      }
    });

    it("gives each pod longer to stop than its SHUTDOWN_TIMEOUT_MS", () => {
      for (const o of ownDeployments()) {
        const pod = podSpec(o)!;
        const main = pod.containers.find((c) => c.name === o.metadata.name)!;
        const shutdownMs = Number(envValue(main, "SHUTDOWN_TIMEOUT_MS"));
        expect(shutdownMs, o.metadata.name).toBeGreaterThan(0);
        expect(pod.terminationGracePeriodSeconds! * 1000, o.metadata.name).toBeGreaterThan(shutdownMs);
      }
    });

    it("makes every Deployment wait for the migrations, which a re-runnable Job applies", () => {
      for (const o of ownDeployments()) {
        const init = podSpec(o)!.initContainers ?? [];
        expect(
          init.map((c) => c.args?.join(" ")),
          o.metadata.name,
        ).toEqual(["node deploy/wait-for-migrations.mjs"]);
      }
      expect(existsSync(`${ROOT}deploy/wait-for-migrations.mjs`)).toBe(true);
      const job = named("Job", "ratatoskr-migrate") as Manifest & {
        spec: { ttlSecondsAfterFinished?: number };
      };
      expect(podSpec(job)!.containers[0]!.args).toEqual(["node", "packages/db/dist/cli/migrate.js"]);
      expect(existsSync(`${ROOT}packages/db/src/cli/migrate.ts`)).toBe(true);
      // A finished Job goes away, so applying a new image creates (runs) it again.
      expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(0);
    });

    it("hands the opencode sidecars the model key, OPENCODE_MODEL and their own password, nothing else", () => {
      const sidecars = byKind("Deployment").flatMap((o) =>
        podSpec(o)!.containers.filter((c) => c.name === "opencode"),
      );
      expect(sidecars).toHaveLength(4);
      for (const sidecar of sidecars) {
        expect(secretsRead(sidecar)).toEqual(["ratatoskr-model", "ratatoskr-opencode"]);
        expect(sidecar.envFrom?.some((f) => f.configMapRef)).toBeFalsy();
        expect(sidecar.env?.find((e) => e.name === "OPENCODE_MODEL")?.valueFrom?.configMapKeyRef).toEqual({
          name: "ratatoskr-config",
          key: "OPENCODE_MODEL",
        });
        expect(
          sidecar.env?.find((e) => e.name === "OPENCODE_SERVER_PASSWORD")?.valueFrom?.secretKeyRef?.name,
        ).toBe("ratatoskr-opencode");
        expect(sidecar.args).toContain("127.0.0.1");
        // Its way out is the egress proxy's Service.
        for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"])
          expect(sidecar.env?.find((e) => e.name === name)?.value, name).toBe("http://egress:3128");
      }
      expect(named("Service", "egress")).toBeDefined();
      // The tool sandbox needs the sidecar's /proc unmasked, which needs the pod's own user namespace.
      for (const o of ownDeployments().filter((o) =>
        podSpec(o)!.containers.some((c) => c.name === "opencode"),
      )) {
        const pod = podSpec(o) as unknown as {
          hostUsers?: boolean;
          containers: Array<{ name: string; securityContext?: { procMount?: string } }>;
        };
        expect(pod.hostUsers, o.metadata.name).toBe(false);
        expect(
          pod.containers.find((c) => c.name === "opencode")?.securityContext?.procMount,
          o.metadata.name,
        ).toBe("Unmasked");
      }
      // Nobody but the sidecars sees the model key; only ingress sees Bull Board's password.
      for (const o of [...byKind("Deployment"), ...byKind("Job"), ...byKind("StatefulSet")]) {
        const pod = podSpec(o)!;
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          if (c.name !== "opencode")
            expect(secretsRead(c), `${o.metadata.name}/${c.name}`).not.toContain("ratatoskr-model");
          if (o.metadata.name !== "ingress")
            expect(secretsRead(c), `${o.metadata.name}/${c.name}`).not.toContain("ratatoskr-bull-board");
        }
      }
    });

    it("refers only to Secrets, ConfigMap keys and Deployments that exist, and ships no working password", () => {
      for (const o of [...byKind("Deployment"), ...byKind("Job"), ...byKind("StatefulSet")]) {
        const pod = podSpec(o)!;
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          for (const secret of secretsRead(c))
            expect(named("Secret", secret), `${o.metadata.name} → ${secret}`).toBeDefined();
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
            if (!ref) continue;
            const source = named(e.valueFrom?.secretKeyRef ? "Secret" : "ConfigMap", ref.name) as
              { data?: Record<string, string>; stringData?: Record<string, string> } | undefined;
            expect(
              Object.keys(source?.stringData ?? source?.data ?? {}),
              `${o.metadata.name} → ${ref.key}`,
            ).toContain(ref.key);
          }
        }
      }
      for (const secret of byKind("Secret") as Array<Manifest & { stringData?: Record<string, string> }>)
        for (const [key, value] of Object.entries(secret.stringData ?? {}))
          if (/PASSWORD|TOKEN|SECRET|KEY/.test(key)) expect(value, `${secret.metadata.name}.${key}`).toBe("");
      // The one place for where Redis and Postgres are.
      const holders = objects.filter((o) => JSON.stringify(o).includes('"DATABASE_URL":'));
      expect(holders.map((o) => o.metadata.name)).toEqual(["ratatoskr-backends"]);
    });

    it("offers single-replica Redis and Postgres StatefulSets behind the Services the URLs name", () => {
      for (const name of ["redis", "postgres"]) {
        const set = named("StatefulSet", name) as Manifest & {
          spec: { replicas: number; serviceName: string };
        };
        expect(set.spec.replicas).toBe(1);
        expect(named("Service", set.spec.serviceName)).toBeDefined();
      }
      const backends = (named("Secret", "ratatoskr-backends") as { stringData: Record<string, string> })
        .stringData;
      expect(new URL(backends.REDIS_URL!).hostname).toBe("redis");
    });

    it("lets the agents' pods reach only DNS, Redis, Postgres, the git host and the egress proxy, which only they reach", () => {
      type Peer = {
        podSelector?: { matchLabels?: Record<string, string> };
        namespaceSelector?: object;
        ipBlock?: object;
      };
      type Policy = Manifest & {
        spec: {
          podSelector: {
            matchLabels?: Record<string, string>;
            matchExpressions?: Array<{ values: string[] }>;
          };
          policyTypes: string[];
          egress?: Array<{ to?: Peer[]; ports?: Array<{ port: number }> }>;
          ingress?: Array<{ from?: Peer[] }>;
        };
      };
      const agents = named("NetworkPolicy", "agent-workers") as Policy;
      const agentPods = ["analyst", "dev", "reviewer", "postmortem"];
      expect(agents.spec.podSelector.matchExpressions?.[0]?.values).toEqual(agentPods);
      expect(agents.spec.policyTypes).toEqual(["Egress"]);
      // Every rule names its peers: none lets the pods anywhere (a rule without `to`).
      expect(agents.spec.egress!.every((rule) => (rule.to?.length ?? 0) > 0)).toBe(true);
      const podPeers = agents.spec.egress!.flatMap((rule) =>
        rule.to!.flatMap((peer) => Object.values(peer.podSelector?.matchLabels ?? {})),
      );
      expect(podPeers.sort()).toEqual(["egress", "kube-dns", "postgres", "redis"]);
      expect(
        agents.spec.egress!.some((rule) =>
          rule.to!.some((peer) => peer.ipBlock !== undefined && JSON.stringify(peer).includes("0.0.0.0/0")),
        ),
      ).toBe(false);
      // Every pod the policy covers carries the opencode sidecar, and every sidecar's pod is covered.
      const withSidecar = ownDeployments().filter((o) =>
        podSpec(o)!.containers.some((c) => c.name === "opencode"),
      );
      expect(withSidecar.map((o) => o.metadata.name).sort()).toEqual([...agentPods].sort());
      const proxy = named("NetworkPolicy", "egress") as Policy;
      expect(proxy.spec.podSelector.matchLabels).toEqual({ "app.kubernetes.io/name": "egress" });
      expect(proxy.spec.ingress!.flatMap((rule) => rule.from!.map((peer) => JSON.stringify(peer)))).toEqual([
        JSON.stringify(agents.spec.podSelector === undefined ? {} : { podSelector: agents.spec.podSelector }),
      ]);
    });

    it("scales each worker with KEDA on its own jobs needing a worker, under the configured QUEUE_PREFIX", () => {
      const scaled = byKind("ScaledObject") as Array<
        Manifest & {
          spec: {
            scaleTargetRef: { name: string };
            triggers: Array<{ type: string; metadata: Record<string, string> }>;
          };
        }
      >;
      const signal = "ratatoskr_queue_jobs_needing_worker";
      expect(
        createMetrics({ service: "k8s-test", defaultMetrics: false }).registry.getSingleMetric(signal),
      ).toBeDefined();
      expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual(Object.keys(WORKERS).sort());
      for (const s of scaled) {
        const target = s.spec.scaleTargetRef.name;
        expect(named("Deployment", target)).toBeDefined();
        expect(s.spec.triggers.map((t) => t.type)).toEqual(["prometheus"]);
        const query = s.spec.triggers[0]!.metadata.query!;
        expect(query).toBe(`max(${signal}{queue="${WORKERS[target]}",prefix="${config().QUEUE_PREFIX}"})`);
        expect(Number(s.spec.triggers[0]!.metadata.threshold)).toBeGreaterThan(0);
      }
    });
  },
);
