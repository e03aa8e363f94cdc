export * from "./client/gitea-client.ts";
export * from "./client/gitea-api.error.ts";
export { retryingDispatcher, type RetryPolicy } from "./client/retrying-fetch.ts";
export * from "./webhook/webhook-signature.ts";
export * from "./webhook/webhook-payload.ts";
export * from "./commands/agent-command.parser.ts";
export * from "./text/hidden-text.sanitizer.ts";
export type { Comment, Issue, PullRequest, Repository, User } from "gitea-js";
export * from "./run/command-run-heartbeat.ts";
