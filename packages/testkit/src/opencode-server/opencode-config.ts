export interface AgentSpec {
  description?: string;
  /** opencode permission frontmatter, e.g. `{ edit: "allow", bash: "ask" }`. */
  permission?: Record<string, "allow" | "ask" | "deny">;
  /** The agent's prompt body (becomes its system prompt; scripts match on it). */
  prompt: string;
}

export interface ProviderSpec {
  /** Provider id, default "fake". */
  id?: string;
  /** OpenAI-compatible base URL (the scripted model's `url`). */
  baseUrl: string;
  /** Model ids served by this provider, default ["scripted"]. */
  models?: string[];
  /**
   * The provider's API key, given to opencode the way a real one is: in its environment
   * (`SCRIPTED_PROVIDER_API_KEY`, read through `{env:…}`), so tests can check it stays there.
   */
  apiKey?: string;
}

/**
 * USD per million tokens of every scripted model, priced the way an operator prices a model in
 * `opencode.json`: spend then flows from the usage the model reports, as with a real provider.
 */
export const SCRIPTED_PRICE = { input: 0.1, output: 0.4 } as const;

/** What a request's reported usage costs at {@link SCRIPTED_PRICE}. */
export function scriptedCost(usage: { prompt_tokens: number; completion_tokens: number }): number {
  return (usage.prompt_tokens * SCRIPTED_PRICE.input + usage.completion_tokens * SCRIPTED_PRICE.output) / 1_000_000;
}

/** The variable {@link ProviderSpec.apiKey} reaches opencode in. */
export const PROVIDER_KEY_VAR = "SCRIPTED_PROVIDER_API_KEY";

/** The `opencode.json` for an isolated server whose only real provider is the scripted model. */
export function buildOpencodeConfig(provider: ProviderSpec, model: string | undefined, extra: Record<string, unknown> = {}): object {
  const id = provider.id ?? "fake";
  const models = Object.fromEntries(
    (provider.models ?? ["scripted"]).map((m) => [m, { name: m, tool_call: true, cost: { ...SCRIPTED_PRICE }, limit: { context: 100_000, output: 4_000 } }]),
  );
  return {
    $schema: "https://opencode.ai/config.json",
    ...(model ? { model } : {}),
    autoupdate: false,
    share: "disabled",
    // As deploy/opencode/opencode.json: no undo history of the agent's edits (git owns the work).
    snapshot: false,
    provider: { [id]: { npm: "@ai-sdk/openai-compatible", name: "Scripted", options: { baseURL: provider.baseUrl, apiKey: provider.apiKey ? `{env:${PROVIDER_KEY_VAR}}` : "x" }, models } },
    ...extra,
  };
}

/**
 * The model catalogue a test server reads (`OPENCODE_MODELS_PATH`): none. The scripted provider is
 * defined whole in opencode.json, and opencode builds its bundled catalogue (~8,000 models) anew for
 * every directory it meets: with it, 8 directories took 28-35 s of opencode's CPU and left it at
 * 1.1 GB; without, 9-13 s and 0.5-0.66 GB (4 at a time, 1.18.33).
 */
export const EMPTY_MODEL_CATALOGUE = "{}\n";

/** An agent file `agent/<name>.md`: YAML frontmatter + prompt body. */
export function renderAgentMarkdown(spec: AgentSpec): string {
  const lines = ["---", `description: ${JSON.stringify(spec.description ?? "test agent")}`, "mode: primary"];
  if (spec.permission) {
    lines.push("permission:");
    for (const [action, effect] of Object.entries(spec.permission)) lines.push(`  ${action}: ${effect}`);
  }
  lines.push("---", spec.prompt, "");
  return lines.join("\n");
}
