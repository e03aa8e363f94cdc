export { escapeHtml } from "./escape-html.ts";
export { splitMessage, TELEGRAM_MESSAGE_LIMIT } from "./split-message.ts";
export {
  classifyTelegramError,
  type TelegramErrorClass,
  type PermanentReason,
} from "./telegram-error.classifier.ts";
export {
  RetryAfterError,
  PermanentTelegramError,
  TransientTelegramError,
  UncertainDeliveryError,
  type PartialDelivery,
} from "./telegram-send.errors.ts";
export {
  TelegramSender,
  type TelegramMessageApi,
  type TelegramSenderOptions,
  type SendOptions,
  type InlineKeyboard,
  type InlineButton,
  type MessageExtra,
} from "./telegram.sender.ts";
