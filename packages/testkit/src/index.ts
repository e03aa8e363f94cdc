export * from "./fake-telegram/index.ts";
export * from "./scripted-model/index.ts";
export * from "./opencode-server/index.ts";
export * from "./processes/index.ts";
export * from "./fake-gitea/index.ts";
export * from "./git-http/index.ts";
export * from "./hostile-text/hostile-corpus.ts";
