/** Extra fields the Bot API attaches to some errors. */
export interface ResponseParameters {
  retry_after?: number;
  migrate_to_chat_id?: number;
}

/**
 * An error answer of the Bot API: `{ ok: false, error_code, description, parameters }`, sent with
 * the HTTP status equal to `error_code`, exactly as api.telegram.org does.
 */
export class BotApiError extends Error {
  constructor(
    readonly errorCode: number,
    readonly description: string,
    readonly parameters?: ResponseParameters,
  ) {
    super(`${errorCode}: ${description}`);
    this.name = "BotApiError";
  }

  toBody(): { ok: false; error_code: number; description: string; parameters?: ResponseParameters } {
    return {
      ok: false,
      error_code: this.errorCode,
      description: this.description,
      ...(this.parameters ? { parameters: this.parameters } : {}),
    };
  }
}

/** The real description texts, so code under test meets what production will meet. */
export const API_ERRORS = {
  unauthorized: () => new BotApiError(401, "Unauthorized"),
  methodNotFound: () => new BotApiError(404, "Not Found"),
  chatNotFound: () => new BotApiError(400, "Bad Request: chat not found"),
  botBlocked: () => new BotApiError(403, "Forbidden: bot was blocked by the user"),
  botKicked: () => new BotApiError(403, "Forbidden: bot was kicked from the group chat"),
  userDeactivated: () => new BotApiError(403, "Forbidden: user is deactivated"),
  messageTooLong: () => new BotApiError(400, "Bad Request: message is too long"),
  textEmpty: () => new BotApiError(400, "Bad Request: message text is empty"),
  cantParseEntities: (detail: string) => new BotApiError(400, `Bad Request: can't parse entities: ${detail}`),
  unsupportedParseMode: (mode: string) =>
    new BotApiError(400, `Bad Request: unsupported parse_mode "${mode}"`),
  notModified: () =>
    new BotApiError(
      400,
      "Bad Request: message is not modified: specified new message content and reply markup are exactly " +
        "the same as a current content and reply markup of the message",
    ),
  messageToEditNotFound: () => new BotApiError(400, "Bad Request: message to edit not found"),
  messageToDeleteNotFound: () => new BotApiError(400, "Bad Request: message to delete not found"),
  messageIdMissing: () => new BotApiError(400, "Bad Request: message identifier is not specified"),
  callbackQueryInvalid: () =>
    new BotApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid"),
  tooManyRequests: (retryAfterSec: number) =>
    new BotApiError(429, `Too Many Requests: retry after ${retryAfterSec}`, { retry_after: retryAfterSec }),
  webhookActive: () =>
    new BotApiError(
      409,
      "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    ),
  terminatedByOtherPoll: () =>
    new BotApiError(
      409,
      "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    ),
  parameterEmpty: (name: string) => new BotApiError(400, `Bad Request: ${name} is empty`),
  badParameter: (detail: string) => new BotApiError(400, `Bad Request: ${detail}`),
  buttonDataInvalid: () => new BotApiError(400, "Bad Request: BUTTON_DATA_INVALID"),
  chatActionInvalid: () => new BotApiError(400, "Bad Request: wrong parameter action in request"),
  commandInvalid: () => new BotApiError(400, "Bad Request: BOT_COMMAND_INVALID"),
  commandDescriptionInvalid: () => new BotApiError(400, "Bad Request: command description is empty"),
} as const;
