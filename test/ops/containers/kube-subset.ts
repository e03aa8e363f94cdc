import type { Manifest, PodContainer, PodSpec } from "../k8s-manifests.ts";

/**
 * k8s/ as rendered by kustomize, turned into what `podman kube play` (podman 4.3) runs, changing
 * only what podman cannot run as written. Each change is listed in `changes`, for the test's
 * report of what ran and what did not.
 */
export interface KubeSubset {
  /** Everything but the migration, played first. */
  workloads: object[];
  /** The migration Job's pod, played once the workloads wait for it. */
  migration: object;
  /**
   * Each Deployment's init containers as a pod of their own (`<name>-gate`, restartPolicy Never),
   * by Deployment name: its workload is played once the gate has exited 0.
   */
  gates: Map<string, object>;
  changes: string[];
}

export interface SubsetOptions {
  /** Image references as the manifests name them → the local images to run instead. */
  images: Record<string, string>;
  /** Values for the Secrets' keys (the manifests ship them empty). */
  secrets: Record<string, string>;
  /** Values added to the ratatoskr-config ConfigMap (e.g. where the fake Telegram is). */
  config: Record<string, string>;
  /** Variables added to every opencode sidecar. */
  sidecarEnv: Record<string, string>;
  /** Extra objects to play with the workloads (the fakes). */
  extra: object[];
}

type Workload = Manifest & {
  spec: { template: { metadata: object; spec: PodSpec }; volumeClaimTemplates?: ClaimTemplate[] };
};
type ClaimTemplate = { metadata: { name: string }; spec: object };
type Service = Manifest & { spec: { selector: Record<string, string> } };
type Volume = { name: string; persistentVolumeClaim?: { claimName: string } };

export function kubeSubset(objects: Manifest[], options: SubsetOptions): KubeSubset {
  const changes: string[] = [];
  const secrets = new Map<string, Record<string, string>>();
  for (const o of objects.filter((o) => o.kind === "Secret"))
    secrets.set(
      o.metadata.name,
      // A value the manifests ship (REDIS_URL) stays unless the test gives its own.
      Object.fromEntries(Object.entries(o.stringData ?? {}).map(([key, value]) => [key, options.secrets[key] ?? String(value)])),
    );
  changes.push(
    "Secrets: their values are written into each container's env (podman 4.3's kube play cannot read Kubernetes Secrets)",
  );
  changes.push(
    "containerPorts: left out (podman 4.3 would publish each on the host); the probes name the port numbers",
  );
  changes.push(
    "opencode sidecars: hostUsers and procMount: Unmasked dropped (podman 4.3 ignores procMount, so the tool sandbox could not mount its /proc and the launcher would refuse to start): the sandbox runs off here (RATATOSKR_SANDBOX=off); the compose test runs it",
  );

  // A Service's name is how pods find its workload; podman resolves pod names, so a workload
  // behind a Service runs as a pod of that name.
  const services = objects.filter((o): o is Service => o.kind === "Service");
  const serviceFor = (o: Workload) =>
    services.find((s) =>
      Object.entries(s.spec.selector).every(
        ([k, v]) => (o.spec.template.metadata as { labels?: Record<string, string> }).labels?.[k] === v,
      ),
    );
  changes.push(
    `Services (${services.map((s) => s.metadata.name).join(", ")}): not played; their workloads run as pods of the Service's name, which podman's DNS resolves`,
  );

  const workloads: object[] = [...options.extra];
  const gates = new Map<string, object>();
  let migration: object | undefined;
  for (const o of objects) {
    switch (o.kind) {
      case "ConfigMap":
        workloads.push(
          o.metadata.name === "ratatoskr-config" ? { ...o, data: { ...o.data, ...options.config } } : o,
        );
        break;
      case "Deployment":
      case "StatefulSet":
      case "Job": {
        const w = o as Workload;
        const { initContainers, ...spec } = podSpecFor(w.spec.template.spec, secrets, options);
        if (o.kind === "Deployment" && initContainers?.length)
          gates.set(o.metadata.name, pod(`${o.metadata.name}-gate`, w, { ...spec, containers: initContainers, restartPolicy: "Never" }));
        else if (initContainers?.length) Object.assign(spec, { initContainers });
        for (const claim of w.spec.volumeClaimTemplates ?? []) {
          const claimName = `${claim.metadata.name}-${o.metadata.name}`;
          workloads.push({
            apiVersion: "v1",
            kind: "PersistentVolumeClaim",
            metadata: { name: claimName },
            spec: claim.spec,
          });
          spec.volumes = [
            ...((spec.volumes as Volume[] | undefined) ?? []),
            { name: claim.metadata.name, persistentVolumeClaim: { claimName } },
          ];
        }
        const service = serviceFor(w);
        if (o.kind === "Job") {
          migration = pod(o.metadata.name, w, spec);
          changes.push(
            `Job ${o.metadata.name}: played as a pod with the Job's template (restartPolicy ${spec.restartPolicy ?? "Always"})`,
          );
        } else if (service || o.kind === "StatefulSet") {
          workloads.push(pod(service?.metadata.name ?? o.metadata.name, w, spec));
          changes.push(
            `${o.kind} ${o.metadata.name}: played as the pod ${service?.metadata.name ?? o.metadata.name}${w.spec.volumeClaimTemplates ? ", its claim templates as PersistentVolumeClaims" : ""}`,
          );
        } else {
          const metadata = w.spec.template.metadata as { annotations?: Record<string, string> };
          workloads.push({ ...o, spec: { ...w.spec, template: { metadata, spec } } });
        }
        break;
      }
      case "Secret":
      case "Service":
        break;
      default:
        changes.push(`${o.kind} ${o.metadata.name}: not played (podman has no ${o.kind})`);
    }
  }
  if (!migration) throw new Error("k8s/ has no migration Job");
  if (gates.size > 0)
    changes.push(
      `initContainers (${[...gates.keys()].join(", ")}): each Deployment's are played as a pod of their own (<name>-gate) and the Deployment once its gate exited 0 (podman 4.3 cannot go on with a pod whose init container has run: "cannot remove container … as it is running")`,
    );
  return { workloads, migration, gates, changes };
}

function pod(name: string, w: Workload, spec: PodSpec & { restartPolicy?: string }): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      labels: (w.spec.template.metadata as { labels?: object }).labels,
    },
    spec,
  };
}

function podSpecFor(
  spec: PodSpec,
  secrets: Map<string, Record<string, string>>,
  options: SubsetOptions,
): PodSpec & { volumes?: unknown; restartPolicy?: string } {
  const container = (c: PodContainer): PodContainer => {
    const env: NonNullable<PodContainer["env"]> = [];
    for (const from of c.envFrom ?? [])
      if (from.secretRef)
        for (const [name, value] of Object.entries(secrets.get(from.secretRef.name) ?? {}))
          if (value !== "") env.push({ name, value });
    for (const e of c.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (!ref) env.push(e);
      else if (secrets.get(ref.name)?.[ref.key])
        env.push({ name: e.name, value: secrets.get(ref.name)![ref.key]! });
    }
    if (c.name === "opencode")
      for (const [name, value] of Object.entries(options.sidecarEnv)) env.push({ name, value });
    // podman 4.3 ignores procMount (see the change noted above): the sidecar runs without it.
    const { securityContext: _procMount, ...plain } = c as PodContainer & { securityContext?: object };
    // podman 4.3 publishes every containerPort on the host: the ports go, probes name numbers.
    const { ports, ...unported } = (c.name === "opencode" ? plain : c) as PodContainer & {
      ports?: Array<{ name?: string; containerPort: number }>;
    };
    const byName = (port: unknown) => ports?.find((p) => p.name === port)?.containerPort ?? port;
    const probes = Object.fromEntries(
      (["readinessProbe", "livenessProbe"] as const).flatMap((key) => {
        const probe = (c as unknown as Record<string, unknown>)[key] as
          { httpGet?: { port: unknown }; tcpSocket?: { port: unknown } } | undefined;
        if (!probe) return [];
        return [
          [
            key,
            {
              ...probe,
              ...(probe.httpGet ? { httpGet: { ...probe.httpGet, port: byName(probe.httpGet.port) } } : {}),
              ...(probe.tcpSocket
                ? { tcpSocket: { ...probe.tcpSocket, port: byName(probe.tcpSocket.port) } }
                : {}),
            },
          ],
        ];
      }),
    );
    return {
      ...unported,
      ...probes,
      image: options.images[c.image ?? ""] ?? c.image,
      imagePullPolicy: "IfNotPresent",
      env,
      envFrom: (c.envFrom ?? []).filter((from) => from.configMapRef),
    } as PodContainer;
  };
  const { hostUsers: _hostUsers, ...rest } = spec as PodSpec & { hostUsers?: boolean };
  return {
    ...rest,
    initContainers: spec.initContainers?.map(container),
    containers: spec.containers.map(container),
  };
}
