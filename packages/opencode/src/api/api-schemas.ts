import { z } from "zod";

// Shapes checked against opencode 1.18.33's /doc and real responses. Objects are loose so newer
// servers may add fields without breaking us; only what the client reads is required.

export const modelRefSchema = z.looseObject({ providerID: z.string(), id: z.string(), variant: z.string().optional() });

export const healthSchema = z.looseObject({ healthy: z.boolean(), version: z.string() });

/** The part of `GET /config` (the server's merged configuration) the start-up check reads. */
export const serverConfigSchema = z.looseObject({ shell: z.string().optional() });

export const sessionInfoSchema = z.looseObject({
  data: z.looseObject({ id: z.string(), agent: z.string().optional(), model: modelRefSchema.optional() }),
});

export const admittedSchema = z.looseObject({
  data: z.looseObject({ id: z.string(), sessionID: z.string(), timeCreated: z.number() }),
});

export const activeSchema = z.looseObject({ data: z.record(z.string(), z.unknown()) });

const tokensSchema = z.looseObject({
  input: z.number().default(0),
  output: z.number().default(0),
  reasoning: z.number().default(0),
  cache: z.looseObject({ read: z.number().default(0), write: z.number().default(0) }).optional(),
});

export const contentPartSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  name: z.string().optional(),
  state: z.looseObject({ status: z.string().optional() }).optional(),
});

export const messageSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  time: z.looseObject({ created: z.number(), completed: z.number().optional() }),
  text: z.string().optional(),
  model: modelRefSchema.optional(),
  content: z.array(contentPartSchema).optional(),
  finish: z.string().optional(),
  cost: z.number().optional(),
  tokens: tokensSchema.optional(),
  error: z.unknown().optional(),
});

export const messagesSchema = z.looseObject({ data: z.array(messageSchema) });

export const permissionRequestSchema = z.looseObject({
  id: z.string(),
  action: z.string(),
  resources: z.array(z.string()).default([]),
});
export const permissionListSchema = z.looseObject({ data: z.array(permissionRequestSchema) });

export const questionRequestSchema = z.looseObject({
  id: z.string(),
  questions: z.array(
    z.looseObject({ question: z.string(), header: z.string().optional(), options: z.array(z.looseObject({ label: z.string() })).default([]) }),
  ),
});
export const questionListSchema = z.looseObject({ data: z.array(questionRequestSchema) });

export const modelListSchema = z.looseObject({ data: z.array(z.looseObject({ id: z.string(), providerID: z.string() })) });

/** A page of a session's durable events (oldest first), as far as a run watcher reads them. */
export const historySchema = z.looseObject({
  data: z.array(
    z.looseObject({
      type: z.string(),
      durable: z.looseObject({ seq: z.number() }).optional(),
      data: z.looseObject({ messageID: z.string().optional() }).optional(),
    }),
  ),
  hasMore: z.boolean(),
});

export const docSchema = z.looseObject({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) });

export type SessionMessage = z.infer<typeof messageSchema>;
export type PermissionRequest = z.infer<typeof permissionRequestSchema>;
export type QuestionRequest = z.infer<typeof questionRequestSchema>;
