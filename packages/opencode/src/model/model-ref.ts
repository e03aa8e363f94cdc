/** opencode's `ModelRef`: `{ providerID, id, variant? }`. */
export interface ModelRef {
  providerID: string;
  id: string;
  variant?: string;
}

/** Parses "provider/model" (split at the first `/`; model ids may contain more slashes). */
export function parseModelRef(value: string): ModelRef | undefined {
  const trimmed = value.trim();
  const slash = trimmed.indexOf("/");
  if (slash <= 0 || slash === trimmed.length - 1) return undefined;
  return { providerID: trimmed.slice(0, slash), id: trimmed.slice(slash + 1) };
}

export function formatModelRef(ref: ModelRef | undefined): string | undefined {
  return ref ? `${ref.providerID}/${ref.id}` : undefined;
}

/** Same provider and model id; the variant is ignored (opencode fills in "default"). */
export function sameModel(a: ModelRef, b: ModelRef): boolean {
  return a.providerID === b.providerID && a.id === b.id;
}
