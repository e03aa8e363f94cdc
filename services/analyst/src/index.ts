export { analystService } from "./analyst.service.ts";
export { ANALYST_CONFIG_SCHEMA, loadAnalystConfig, type AnalystConfig } from "./config/analyst.config.ts";
export { analystVerdictSchema, type AnalystVerdict } from "./verdict/analyst-verdict.schema.ts";
export type { RepositoryDirectory } from "./repositories/repository-directory.ts";
