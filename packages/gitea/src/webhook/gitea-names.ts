/**
 * What Gitea (and Forgejo) lets a login or a repository be called: ASCII letters, digits, `-`, `_`
 * and `.`, a login at most 40 characters long and a repository name at most 100, never dots alone
 * (Gitea's `IsValidUsername` and `AlphaDashDot` are stricter still). A login and a repository
 * name reach prompts, status comments and API paths as they are, outside any untrusted-text
 * block (S4): a name outside these sets is no name Gitea sends, and is refused where it comes in.
 */
const LOGIN = /^[A-Za-z0-9_.-]{1,40}$/;
const REPO_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const ONLY_DOTS = /^\.+$/;

export function isGiteaLogin(name: string): boolean {
  return LOGIN.test(name) && !ONLY_DOTS.test(name);
}

export function isGiteaRepoName(name: string): boolean {
  return REPO_NAME.test(name) && !ONLY_DOTS.test(name);
}
