import { API_ERRORS } from "./bot-api.error.ts";
import type { BotCommand, UpdateType } from "./bot-api.types.ts";
import type { MethodHandler } from "./method.context.ts";
import { optionalBool, optionalInt, optionalJson, optionalString, type Params } from "./request-params.ts";

const COMMAND_NAME = /^[a-z0-9_]{1,32}$/;

function allowedUpdates(params: Params): UpdateType[] | undefined {
  const raw = optionalJson(params, "allowed_updates", "allowed_updates");
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) throw API_ERRORS.badParameter("can't parse allowed_updates JSON array");
  return raw.map(String) as UpdateType[];
}

const getMe: MethodHandler = (_params, ctx) => ({
  ...ctx.bot,
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
});

const getUpdates: MethodHandler = (params, ctx) => {
  if (ctx.webhook.active) throw API_ERRORS.webhookActive();
  return ctx.updates.poll({
    offset: optionalInt(params, "offset"),
    limit: optionalInt(params, "limit"),
    timeoutSec: optionalInt(params, "timeout"),
    allowedUpdates: allowedUpdates(params),
    signal: ctx.signal,
  });
};

/**
 * Unlike api.telegram.org the fake accepts plain `http://` URLs on any port: the bot under test
 * listens on loopback.
 */
const setWebhook: MethodHandler = async (params, ctx) => {
  const url = optionalString(params, "url") ?? "";
  if (optionalBool(params, "drop_pending_updates")) ctx.updates.dropAll();
  const allowed = allowedUpdates(params);
  ctx.updates.setAllowedUpdates(allowed);
  if (url === "") {
    await ctx.webhook.clear();
    return true;
  }
  if (!/^https?:\/\//.test(url)) throw API_ERRORS.badParameter("invalid webhook URL specified");
  const secretToken = optionalString(params, "secret_token");
  if (secretToken !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secretToken)) {
    throw API_ERRORS.badParameter("secret token contains unallowed characters");
  }
  const maxConnections = optionalInt(params, "max_connections");
  ctx.webhook.set({
    url,
    ...(secretToken ? { secretToken } : {}),
    ...(allowed ? { allowedUpdates: allowed } : {}),
    ...(maxConnections !== undefined ? { maxConnections } : {}),
  });
  return true;
};

const deleteWebhook: MethodHandler = async (params, ctx) => {
  if (optionalBool(params, "drop_pending_updates")) ctx.updates.dropAll();
  await ctx.webhook.clear();
  return true;
};

const getWebhookInfo: MethodHandler = (_params, ctx) => ctx.webhook.info();

const setMyCommands: MethodHandler = (params, ctx) => {
  const raw = optionalJson(params, "commands", "commands");
  if (!Array.isArray(raw)) throw API_ERRORS.parameterEmpty("commands");
  const commands: BotCommand[] = raw.map((entry: unknown) => {
    const { command, description } = (entry ?? {}) as Record<string, unknown>;
    if (typeof command !== "string" || !COMMAND_NAME.test(command)) throw API_ERRORS.commandInvalid();
    if (typeof description !== "string" || description.length < 1 || description.length > 256) {
      throw API_ERRORS.commandDescriptionInvalid();
    }
    return { command, description };
  });
  ctx.commands.list = commands;
  return true;
};

const getMyCommands: MethodHandler = (_params, ctx) => ctx.commands.list;

export const BOT_METHODS: Record<string, MethodHandler> = {
  getMe,
  getUpdates,
  setWebhook,
  deleteWebhook,
  getWebhookInfo,
  setMyCommands,
  getMyCommands,
};
