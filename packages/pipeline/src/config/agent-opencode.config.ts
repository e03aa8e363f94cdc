import { envString, envUrl, type Logger } from "@ratatoskr/runtime";
import { createOpencodeClient, type OpencodeClient } from "@ratatoskr/opencode";

/**
 * The opencode server the dev and reviewer agents run in. Same variables as the analyst's.
 * TODO(issue 11): replace with packages/opencode's shared OPENCODE_CONFIG_SCHEMA and factory once on main.
 */
export const AGENT_OPENCODE_CONFIG_SCHEMA = {
  url: envUrl("OPENCODE_URL", {
    default: "http://127.0.0.1:4096",
    protocols: ["http", "https"],
    description: "opencode serve the agents run in (its v2 API, version >= 1.18.18)",
  }),
  password: envString("OPENCODE_SERVER_PASSWORD", {
    optional: true,
    secret: true,
    description:
      "Basic-auth password of opencode serve (user opencode); set it whenever the server listens beyond loopback",
  }),
  model: envString("OPENCODE_MODEL", {
    optional: true,
    pattern: /^[^/\s]+\/\S+$/,
    description:
      "Model pinned on every agent session (provider/model); unset: the top-level model of OPENCODE_CONFIG_FILE",
  }),
  configFile: envString("OPENCODE_CONFIG_FILE", {
    optional: true,
    description: "opencode config file (JSONC) whose top-level model is the pin when OPENCODE_MODEL is unset",
  }),
};

export interface AgentOpencodeConfig {
  url: string;
  password?: string | undefined;
  model?: string | undefined;
  configFile?: string | undefined;
}

export function agentOpencodeClient(config: AgentOpencodeConfig, logger: Logger): OpencodeClient {
  return createOpencodeClient({
    baseUrl: config.url,
    logger,
    ...(config.password ? { password: config.password } : {}),
    ...(config.model ? { defaultModel: config.model } : {}),
    ...(config.configFile ? { configFile: config.configFile } : {}),
  });
}
