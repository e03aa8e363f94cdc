export { FakeGitea, type FakeGiteaOptions, type GiteaRequest } from "./fake-gitea.server.ts";
export { RepoStore, type RepoOverrides } from "./repo.store.ts";
export { GITEA_MESSAGES } from "./gitea-api.errors.ts";
export { giteaJson, WebhookSender, type FakeDelivery } from "./webhook.sender.ts";
export type { FaultRule } from "./fault.injector.ts";
export type { FakePermission } from "./permission.store.ts";
