import { OPENCODE_INSTALL_HINT } from "../errors/install-hint.ts";
import { OpencodeContractError } from "../errors/opencode-contract.error.ts";
import { OpencodeTooOldError } from "../errors/opencode-too-old.error.ts";
import { OpencodeUnavailableError } from "../errors/opencode-unavailable.error.ts";
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
 * What is wrong with the server and what to do about it, in one line: the client's own errors
 * say both; anything else (a timeout, a surprise) gets the things to check.
 */
function startupProblem(err: unknown, urls: readonly string[]): string {
  if (err instanceof OpencodeUnavailableError || err instanceof OpencodeTooOldError || err instanceof OpencodeContractError)
    return err.message;
  const where = urls.join(", ");
  if (err instanceof Error && err.name === "TimeoutError")
    return `opencode at ${where} did not answer within ${STARTUP_CHECK_TIMEOUT_MS / 1000} s: check that \`opencode serve\` runs there and is not overloaded`;
  const message = err instanceof Error ? err.message : String(err);
  return `opencode at ${where} could not be checked (${message}): check OPENCODE_URL or OPENCODE_URLS and that \`opencode serve\` runs there (${OPENCODE_INSTALL_HINT})`;
}

/**
 * O1: a server that is down, too old or lacks the v2 routes is reported clearly at start, in one
 * line without a stack (the cause is the server, not this code), but the service still starts:
 * readiness stays false and jobs retry until opencode is there. Never throws.
 */
export async function checkOpencodeAtStart(client: OpencodeClient, logger: FactoryLogger, service: string): Promise<void> {
  try {
    const info = await client.checkServer(AbortSignal.timeout(STARTUP_CHECK_TIMEOUT_MS));
    logger.info({ url: info.url, version: info.version }, "opencode server checked");
  } catch (err) {
    // No fields: the line names the servers, and a pretty terminal log prints each field on a line of its own.
    logger.error(
      {},
      `opencode server not usable, so ${service} jobs wait and readiness stays false until it is: ${startupProblem(err, client.serverUrls)}`,
    );
  }
}
