export { startScriptedModel } from "./scripted-model.server.ts";
export type { ScriptedModel, ScriptedModelOptions } from "./scripted-model.server.ts";
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
