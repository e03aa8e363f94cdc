export { startOpencodeServer } from "./opencode-server.ts";
export type { OpencodeServer, OpencodeServerOptions } from "./opencode-server.ts";
export { buildOpencodeConfig, renderAgentMarkdown, SCRIPTED_PRICE, scriptedCost } from "./opencode-config.ts";
export type { AgentSpec, ProviderSpec } from "./opencode-config.ts";
export { resolveOpencodeBinary } from "./opencode-binary.ts";
export { freePort } from "./free-port.ts";
export { sandboxRequired, toolSandboxSupport, SANDBOX_SHELL, SERVE_LAUNCHER, type ToolSandboxMode } from "./tool-sandbox.ts";
export { startTestOpencode, TEST_OPENCODE_IDLE_VAR, TEST_OPENCODE_VAR, type TestOpencode, type TestOpencodeOptions } from "./shared-opencode.ts";
