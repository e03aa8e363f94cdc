import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { RepositoryDirectory } from "./repository-directory.ts";

/** Demo mode's "git host": bare repositories at `<root>/<owner>/<name>.git`. */
export class LocalRepositoryDirectory implements RepositoryDirectory {
  readonly description: string;
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.description = `local ${this.root}`;
  }

  async exists(fullName: `${string}/${string}`): Promise<boolean> {
    const [owner = "", name = ""] = fullName.split("/");
    // A bare repository has a HEAD file; an empty directory of that name is not a repository.
    try {
      const head = await stat(join(this.root, owner, `${name}.git`, "HEAD"));
      return head.isFile();
    } catch (err) {
      if (
        (err as NodeJS.ErrnoException).code === "ENOENT" ||
        (err as NodeJS.ErrnoException).code === "ENOTDIR"
      )
        return false;
      throw err;
    }
  }
}
