import type { DialogueTurn } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

export interface NewDialogueTurn {
  taskId: number;
  role: "user" | "assistant";
  text: string;
  telegramMessageId?: number | bigint | null;
  /** Unique: a second turn with the same key is refused (see `isDuplicateTurn`). */
  messageKey?: string | null;
}

/** The key of a Telegram message as a dialogue turn: the same message is one turn, however often it comes. */
export function telegramMessageKey(chatId: number, messageId: number): string {
  return `telegram:${chatId}:${messageId}`;
}

/** True for the error of adding a turn whose message key is already stored. */
export function isDuplicateTurn(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const { code, meta } = err as { code?: unknown; meta?: unknown };
  return code === "P2002" && JSON.stringify(meta ?? {}).includes("message_key");
}

/** The Telegram dialogue of a task, in arrival order. */
export class DialogueTurnRepository {
  constructor(private readonly db: DbClient) {}

  add(turn: NewDialogueTurn): Promise<DialogueTurn> {
    return this.db.dialogueTurn.create({
      data: {
        taskId: turn.taskId,
        role: turn.role,
        text: turn.text,
        telegramMessageId: turn.telegramMessageId ?? null,
        messageKey: turn.messageKey ?? null,
      },
    });
  }

  list(taskId: number): Promise<DialogueTurn[]> {
    return this.db.dialogueTurn.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  }

  /** User turns no analysis has consumed yet (T5: nothing lost, nothing out of order). */
  listPending(taskId: number): Promise<DialogueTurn[]> {
    return this.db.dialogueTurn.findMany({
      where: { taskId, role: "user", analysedAt: null },
      orderBy: { id: "asc" },
    });
  }

  /** Marks the turns an analysis consumed; run it `alongside` the transition that reports the analysis. */
  async markAnalysed(turnIds: readonly number[], at = new Date()): Promise<number> {
    const { count } = await this.db.dialogueTurn.updateMany({
      where: { id: { in: [...turnIds] }, analysedAt: null },
      data: { analysedAt: at },
    });
    return count;
  }
}
