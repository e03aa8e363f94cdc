import { createHmac, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ioError, isErrno } from "./workspace-layout.ts";

/**
 * A task's directory is named `<taskId>-<tag>`, the tag an HMAC of the id under a key only the
 * service reads (`state/.task-dir-key`). An agent learns its own directory's name but can never
 * name another task's: the tool sandbox binds the directory a tool call runs in, and a symlink
 * racing opencode's path resolution could otherwise point it at a sibling (deploy/opencode).
 */
export function taskDirTagger(stateRoot: string): (taskId: string) => string {
  let key: Buffer | undefined; // read on first use: a broken root fails the first operation, not construction
  return (taskId) => {
    key ??= loadOrCreateKey(path.join(stateRoot, ".task-dir-key"));
    return createHmac("sha256", key).update(taskId).digest("hex").slice(0, 32);
  };
}

function loadOrCreateKey(file: string): Buffer {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      // "wx": two processes sharing WORKSPACE_DIR never both create one; the loser reads the winner's.
      writeFileSync(file, randomBytes(32).toString("hex"), { flag: "wx", mode: 0o600 });
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
    const hex = readFileSync(file, "utf8").trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${file} does not hold a key`);
    return Buffer.from(hex, "hex");
  } catch (error) {
    throw ioError(`cannot read the task directory key ${file}`, error);
  }
}
