export { startScriptedModel, startSharedScriptedModel } from "./scripted-model.server.ts";
export type { ScriptedModel, ScriptedModelOptions, ScriptedModelServer } from "./scripted-model.server.ts";
export { reply } from "./reply-builders.ts";
export { ScriptEngine, matches } from "./script-engine.ts";
export type {
  ChatMessage,
  MatchSpec,
  ModelRequest,
  RequestMatcher,
  ScriptRule,
  ScriptTurn,
  TokenUsageReport,
  ToolCallSpec,
} from "./script-types.ts";
