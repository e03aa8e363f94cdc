import { GitCommandError } from "./errors/git-workspace.error.ts";

/**
 * The subset of git's ref-name rules we accept for branches (see git-check-ref-format): ASCII
 * letters, digits, `._/-`; no `..`, `//`, `@{`, leading `-` or `/`, trailing `/`, `.` or `.lock`.
 */
export function assertBranchName(branch: string): void {
  const ok =
    /^[A-Za-z0-9._/-]{1,200}$/.test(branch) &&
    !branch.startsWith("-") &&
    !branch.startsWith("/") &&
    !branch.endsWith("/") &&
    !branch.endsWith(".") &&
    !branch.endsWith(".lock") &&
    !branch.includes("..") &&
    !branch.includes("//") &&
    !branch.split("/").some((part) => part.startsWith("."));
  if (!ok) throw new GitCommandError(`"${branch.slice(0, 100)}" is not an acceptable branch name`);
}
