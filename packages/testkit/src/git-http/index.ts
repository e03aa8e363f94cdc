export { runBackend, startGitHttpServer, type GitHttpServer, type GitHttpServerOptions, type GitHttpRequest } from "./git-http.server.ts";
export { createBareRepo, commitToBare, gitFixture } from "./bare-repo.ts";
