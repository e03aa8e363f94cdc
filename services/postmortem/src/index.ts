export { postmortemService } from "./postmortem.service.ts";
export { createExplainFailureHandler, POSTMORTEM_AGENT, POSTMORTEM_POLICY, type PostmortemHandlerDeps } from "./handlers/explain-failure.handler.ts";
export { POSTMORTEM_CONFIG_SCHEMA, loadPostmortemConfig, type PostmortemConfig } from "./config/postmortem.config.ts";
