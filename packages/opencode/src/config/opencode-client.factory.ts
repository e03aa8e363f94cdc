import { createOpencodeClient, type OpencodeClient } from "../opencode-client.ts";
import type { OpencodeLogger } from "../run/agent-run.ts";
import { opencodeServerUrls, type OpencodeConfig } from "./opencode.config.ts";

/** The start-up check must not hold the process up for long: readiness keeps checking anyway. */
export const STARTUP_CHECK_TIMEOUT_MS = 10_000;

export interface FactoryLogger extends OpencodeLogger {
  info(data: Record<string, unknown>, message: string): void;
  error(data: Record<string, unknown>, message: string): void;
}

function isLoopback(url: string): boolean {
  return ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
}

/** The client every agent service uses, built from OPENCODE_CONFIG_SCHEMA's values. */
export function createOpencodeClientFromConfig(config: OpencodeConfig, logger: FactoryLogger): OpencodeClient {
  const urls = opencodeServerUrls(config);
  const remote = urls.filter((u) => !isLoopback(u));
  if (!config.password && remote.length > 0) {
    logger.warn({ urls: remote }, "OPENCODE_SERVER_PASSWORD is not set for an opencode server beyond loopback");
  }
  return createOpencodeClient({
    baseUrl: urls[0] as string,
    baseUrls: urls,
    maxConcurrentPrompts: config.maxPromptsPerServer,
    logger,
    ...(config.password ? { password: config.password } : {}),
    ...(config.model ? { defaultModel: config.model } : {}),
    ...(config.configFile ? { configFile: config.configFile } : {}),
  });
}

/**
 * O1: a server that is down, too old or lacks the v2 routes is reported clearly at start, but the
 * service still starts: readiness stays false and jobs retry until opencode is there.
 * Never throws.
 */
export async function checkOpencodeAtStart(client: OpencodeClient, logger: FactoryLogger, service: string): Promise<void> {
  try {
    const info = await client.checkServer(AbortSignal.timeout(STARTUP_CHECK_TIMEOUT_MS));
    logger.info({ url: info.url, version: info.version }, "opencode server checked");
  } catch (err) {
    logger.error({ err }, `opencode server not usable; ${service} jobs wait and readiness stays false until it is`);
  }
}
