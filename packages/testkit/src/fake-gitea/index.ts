export { FakeGitea, type FakeGiteaOptions, type GiteaRequest } from "./fake-gitea.server.ts";
export { RepoStore, type RepoOverrides } from "./repo.store.ts";
export { GITEA_MESSAGES } from "./gitea-api.errors.ts";
