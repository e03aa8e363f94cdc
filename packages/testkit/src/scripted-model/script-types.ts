/** One chat message as opencode sends it to an OpenAI-compatible provider. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null | Array<{ type: string; text?: string }>;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** What the scripted model saw in one `/v1/chat/completions` call, kept for assertions. */
export interface ModelRequest {
  /** Monotonic sequence number across the server's life. */
  seq: number;
  /** Epoch ms when the request arrived. */
  receivedAt: number;
  /** Epoch ms when the response stream ended (undefined while streaming or if aborted). */
  endedAt?: number;
  /** True when the caller hung up before the reply was complete. */
  aborted: boolean;
  /** Epoch ms when the caller hung up before the reply was complete. */
  abortedAt?: number;
  /** opencode's session id (`x-session-id` header), the conversation key. */
  sessionId: string | undefined;
  /** Concatenated system messages (agent prompt + environment). */
  system: string;
  /** Text of every user message, in order. */
  userTexts: string[];
  /** Text of the last user message. */
  lastUserText: string;
  /** True when the last message is a tool result (the call continues a tool turn). */
  isToolResult: boolean;
  /** Names of the tools offered to the model. */
  tools: string[];
  messages: ChatMessage[];
  /** Name (or index) of the rule that answered, or "fallback". */
  answeredBy: string;
  /** Index of the turn within the rule's reply list. */
  turnIndex: number;
  /** The caller asked for usage in the stream (`stream_options.include_usage`), as opencode does. */
  includeUsage: boolean;
  /** The token usage the answer reported (set once it is sent; absent when not asked for). */
  usage?: TokenUsageReport;
}

/** What an OpenAI-compatible provider reports in the last chunk of a streamed answer. */
export interface TokenUsageReport {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A tool call the model makes; `args` is JSON-encoded as the function arguments. */
export interface ToolCallSpec {
  name: string;
  args: Record<string, unknown>;
}

interface TurnTiming {
  /** Wait this long (ms) before the first byte of the reply. */
  delayMs?: number;
  /**
   * Answer only once this settles: a test sets up the worst moment (a row held, a process about
   * to be killed) while the run waits on its model, then lets the answer go.
   */
  holdUntil?: Promise<unknown>;
  /** Wait this long (ms) between streamed chunks. */
  chunkDelayMs?: number;
}

/** One model reply. A tool turn ends with `finish_reason: "tool_calls"`; opencode runs the tools and calls again. */
export type ScriptTurn =
  | (TurnTiming & { text: string; /** stream the text in this many chunks (default 1) */ chunks?: number })
  | (TurnTiming & { toolCalls: ToolCallSpec[]; text?: string })
  | (TurnTiming & { httpError: { status: number; message: string } });

/** Declarative matcher: every given field must hold. */
export interface MatchSpec {
  /** Substring of the system prompt (use a phrase unique to the agent's .md body). */
  systemIncludes?: string;
  /** Substring of any user message in the conversation (e.g. a marker in the prompt). */
  promptIncludes?: string;
  /** Exact opencode session id. */
  sessionId?: string;
}

export type RequestMatcher = MatchSpec | ((req: ModelRequest) => boolean);

/** Rule: when `match` holds, answer with `reply` turns, consumed in order per conversation. */
export interface ScriptRule {
  name?: string;
  match: RequestMatcher;
  reply: ScriptTurn[];
}
