import { API_ERRORS } from "./bot-api.error.ts";
import type { Chat, InlineKeyboardMarkup, User } from "./bot-api.types.ts";
import type { MessageEntity } from "./telegram-html.parser.ts";

/** Why the bot can no longer write to a chat; each maps to the API's 403 text. */
export type ChatBlock = "blocked" | "kicked" | "deactivated";

export interface StoredMessage {
  messageId: number;
  /** `bot` for messages the bot sent, `user` for those the driver sent as a person. */
  author: "bot" | "user";
  from: User;
  text: string;
  plainText: string;
  entities: MessageEntity[];
  parseMode: string | undefined;
  replyMarkup: InlineKeyboardMarkup | undefined;
  date: number;
  editDate?: number;
  deleted: boolean;
}

interface ChatState {
  chat: Chat;
  block: ChatBlock | undefined;
  /** Message ids are per chat and shared by both sides, as in private chats. */
  nextMessageId: number;
  messages: Map<number, StoredMessage>;
}

/** Chats the bot knows about and every message in them. A chat unknown here is "chat not found". */
export class ChatStore {
  private readonly chats = new Map<number, ChatState>();

  ensure(chatId: number, chat?: Partial<Chat>): Chat {
    let state = this.chats.get(chatId);
    if (!state) {
      const base: Chat =
        chatId > 0
          ? { id: chatId, type: "private", first_name: `User ${chatId}`, username: `user${chatId}` }
          : { id: chatId, type: "group", title: `Group ${-chatId}` };
      state = {
        chat: { ...base, ...chat, id: chatId },
        block: undefined,
        nextMessageId: 1,
        messages: new Map(),
      };
      this.chats.set(chatId, state);
    }
    return state.chat;
  }

  has(chatId: number): boolean {
    return this.chats.has(chatId);
  }

  setBlock(chatId: number, block: ChatBlock | undefined): void {
    this.ensure(chatId);
    (this.chats.get(chatId) as ChatState).block = block;
  }

  /** The chat the bot may write to, or the API error it would get. */
  writable(chatId: number): Chat {
    const state = this.chats.get(chatId);
    if (!state) throw API_ERRORS.chatNotFound();
    if (state.block === "blocked") throw API_ERRORS.botBlocked();
    if (state.block === "kicked") throw API_ERRORS.botKicked();
    if (state.block === "deactivated") throw API_ERRORS.userDeactivated();
    return state.chat;
  }

  add(chatId: number, message: Omit<StoredMessage, "messageId" | "deleted">): StoredMessage {
    this.ensure(chatId);
    const state = this.chats.get(chatId) as ChatState;
    const stored: StoredMessage = { ...message, messageId: state.nextMessageId++, deleted: false };
    state.messages.set(stored.messageId, stored);
    return stored;
  }

  get(chatId: number, messageId: number): StoredMessage | undefined {
    const message = this.chats.get(chatId)?.messages.get(messageId);
    return message && !message.deleted ? message : undefined;
  }

  /** Including deleted ones, for assertions. */
  peek(chatId: number, messageId: number): StoredMessage | undefined {
    return this.chats.get(chatId)?.messages.get(messageId);
  }

  chat(chatId: number): Chat | undefined {
    return this.chats.get(chatId)?.chat;
  }
}
