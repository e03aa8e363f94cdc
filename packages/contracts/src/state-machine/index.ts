export * from "./task-status.ts";
export * from "./task-events.ts";
export * from "./task-effects.ts";
export * from "./task-snapshot.ts";
export * from "./transition-result.ts";
export { reduceTask } from "./task-reducer.ts";
export { isPlanning, isPullIterate } from "./pipeline-jobs.ts";
