import { ConfigError, envInt, envList, envString, envUrl, type ConfigOf } from "@ratatoskr/runtime";

/** opencode's own default `serve` port, so a local setup works without configuration. */
export const DEFAULT_OPENCODE_URL = "http://127.0.0.1:4096";

/**
 * The opencode variables every agent service reads (analyst, dev, reviewer, postmortem): nest it
 * in a service's schema as `opencode: OPENCODE_CONFIG_SCHEMA` and build the client with
 * `createOpencodeClientFromConfig`.
 */
export const OPENCODE_CONFIG_SCHEMA = {
  url: envUrl("OPENCODE_URL", {
    default: DEFAULT_OPENCODE_URL,
    protocols: ["http", "https"],
    description: "opencode serve the agents run in (its v2 API, version >= 1.18.18)",
  }),
  urls: envList("OPENCODE_URLS", {
    optional: true,
    description: "Several opencode servers sharing the sessions (least-loaded placement, session affinity); overrides OPENCODE_URL",
  }),
  password: envString("OPENCODE_SERVER_PASSWORD", {
    optional: true,
    secret: true,
    description: "Basic-auth password of opencode serve (user opencode); set it whenever the server listens beyond loopback",
  }),
  model: envString("OPENCODE_MODEL", {
    optional: true,
    pattern: /^[^/\s]+\/\S+$/,
    description: "Model pinned on every agent session (provider/model); unset: the top-level model of OPENCODE_CONFIG_FILE",
  }),
  configFile: envString("OPENCODE_CONFIG_FILE", {
    optional: true,
    description: "opencode config file (JSONC) whose top-level model is the pin when OPENCODE_MODEL is unset",
  }),
  maxPromptsPerServer: envInt("OPENCODE_MAX_PROMPTS_PER_SERVER", {
    default: 8,
    min: 1,
    max: 1_000,
    description: "Agent runs one opencode server works on at once (per process); more wait in order",
  }),
};

export type OpencodeConfig = ConfigOf<typeof OPENCODE_CONFIG_SCHEMA>;

/** The servers to use: OPENCODE_URLS when set (each checked), else OPENCODE_URL. Throws ConfigError. */
export function opencodeServerUrls(config: Pick<OpencodeConfig, "url" | "urls">): string[] {
  if (!config.urls || config.urls.length === 0) return [config.url];
  const bad = config.urls.filter((u) => !URL.canParse(u) || !["http:", "https:"].includes(new URL(u).protocol));
  if (bad.length) throw new ConfigError([{ name: "OPENCODE_URLS", message: `not http(s) URLs: ${bad.join(", ")}` }]);
  const unique = [...new Set(config.urls.map((u) => u.replace(/\/+$/, "")))];
  return unique;
}
