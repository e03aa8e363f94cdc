export * from "./queues.ts";
export * from "./jobs/job-schemas.ts";
export * from "./jobs/job-catalog.ts";
export * from "./jobs/job-id.ts";
export * from "./state-machine/index.ts";
export * from "./telegram-callback.ts";
export * from "./budget.ts";
export * from "./review-verdict.ts";
