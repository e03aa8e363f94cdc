export { notifierService, createNotifierService, type NotifierServiceOptions } from "./notifier.service.ts";
export type { MessageChannel } from "./channels/message-channel.ts";
export { NOTIFIER_CONFIG_SCHEMA, type NotifierConfig } from "./config/notifier.config.ts";
export * from "./telegram/index.ts";
export * from "./i18n/index.ts";
export { reconcileStatusComment, type StatusCommentDeps } from "./gitea/status-comment.reconciler.ts";
export { readLiveRun, type LiveRun } from "./progress/live-run.ts";
