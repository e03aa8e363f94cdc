import { execFileSync } from "node:child_process";
import { parseAllDocuments } from "yaml";

/** One rendered Kubernetes object, as `kubectl kustomize` prints it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  /** ConfigMap values. */
  data?: Record<string, string>;
  /** Secret values as written in the manifests. */
  stringData?: Record<string, string>;
  [field: string]: unknown;
}

/** `kubectl kustomize <dir>`: every object of the kustomization, rendered. */
export function kustomize(dir: string): Manifest[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  return parseAllDocuments(out).map((doc) => doc.toJS() as Manifest);
}

/** The model class module for an apiVersion/kind: kubernetes-models, or its KEDA models. */
function modelModule(apiVersion: string, kind: string): string {
  if (apiVersion.startsWith("keda.sh/")) return `@kubernetes-models/keda/${apiVersion}/${kind}`;
  return `kubernetes-models/${apiVersion}/${kind}`;
}

/**
 * Validates an object against the Kubernetes (or KEDA) OpenAPI schema compiled into the model
 * packages, offline. Returns the schema's complaint, or undefined when the object is valid.
 */
export async function schemaProblem(manifest: Manifest): Promise<string | undefined> {
  let Model: new (data: unknown) => { validate(): void };
  try {
    const mod = (await import(modelModule(manifest.apiVersion, manifest.kind))) as Record<string, unknown>;
    Model = mod[manifest.kind] as typeof Model;
  } catch {
    return `no schema for ${manifest.apiVersion} ${manifest.kind}`;
  }
  try {
    new Model(manifest).validate();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export interface PodContainer {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string };
      configMapKeyRef?: { name: string; key: string };
    };
  }>;
  envFrom?: Array<{ secretRef?: { name: string }; configMapRef?: { name: string } }>;
}

export interface PodSpec {
  terminationGracePeriodSeconds?: number;
  initContainers?: PodContainer[];
  containers: PodContainer[];
}

/** The pod template of a workload (Deployment, StatefulSet, Job), if it has one. */
export function podSpec(manifest: Manifest): PodSpec | undefined {
  const spec = manifest.spec as { template?: { spec?: PodSpec } } | undefined;
  return spec?.template?.spec;
}

/** Names of the Secrets a container reads, by envFrom or by key. */
export function secretsRead(container: PodContainer): string[] {
  const names = [
    ...(container.envFrom ?? []).flatMap((from) => (from.secretRef ? [from.secretRef.name] : [])),
    ...(container.env ?? []).flatMap((e) =>
      e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [],
    ),
  ];
  return [...new Set(names)].sort();
}
