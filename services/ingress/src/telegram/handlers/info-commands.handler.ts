import type { BotDeps, MessageInput } from "./bot-deps.ts";
import { reply } from "./reply.ts";

export async function handleHelp(deps: BotDeps, msg: MessageInput): Promise<void> {
  await reply(deps, { chatId: msg.chatId, taskId: null }, "bot.help", {});
}

/** `/status` without N: the versions the running services report in their heartbeats. */
export async function handleVersions(deps: BotDeps, msg: MessageInput): Promise<void> {
  const services = await deps.readVersions();
  await reply(deps, { chatId: msg.chatId, taskId: null }, "bot.versions", { services });
}

/** Anything else starting with a slash gets the list of what the bot understands. */
export async function handleUnknownCommand(deps: BotDeps, msg: MessageInput, command: string): Promise<void> {
  await reply(deps, { chatId: msg.chatId, taskId: null }, "bot.unknown-command", { command });
}
