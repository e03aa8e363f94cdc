import { InvalidRepoNameError } from "./errors/git-workspace.error.ts";

/** A validated repository name on the configured host. */
export interface RepoRef {
  readonly owner: string;
  readonly name: string;
  /** `owner/name`. */
  readonly fullName: string;
}

/** Gitea/GitHub-style names: letters, digits, `-`, `_`, `.`; not starting with a dot. */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

/**
 * Validates a repository name given by a person: `owner/name`, optionally ending in `.git`, or a
 * URL on `baseUrl`'s host. No `..`, no absolute paths, no other hosts, no credentials in URLs.
 * Throws {@link InvalidRepoNameError} saying what is wrong.
 */
export function validateRepoName(input: string, options: { baseUrl?: string } = {}): RepoRef {
  const raw = input.trim();
  if (raw === "") throw invalid(input, "it is empty");
  if (/(^|[/\\])\.\.([/\\]|$)/.test(raw) || /(^|\/)(%2e|\.)(%2e|\.)(\/|$)/i.test(raw)) throw invalid(input, "`..` and `.` are not allowed");
  if (/^[A-Za-z]:[\\/]/.test(raw)) throw invalid(input, "absolute paths are not repository names");
  const path = /^[a-z][a-z0-9+.-]*:/i.test(raw) || raw.startsWith("//") ? pathOnHost(raw, options.baseUrl) : raw;
  if (path.startsWith("/") || path.startsWith("~") || /^[A-Za-z]:[\\/]/.test(path)) {
    throw invalid(input, "absolute paths are not repository names");
  }
  if (path.includes("\\")) throw invalid(input, "backslashes are not allowed");
  const parts = path.replace(/\.git$/, "").split("/");
  if (parts.some((p) => p === ".." || p === ".")) throw invalid(input, "`..` and `.` are not allowed");
  if (parts.length !== 2) throw invalid(input, "expected owner/name");
  const [owner, name] = parts as [string, string];
  for (const segment of [owner, name]) {
    if (!SEGMENT.test(segment) || segment.endsWith(".lock")) {
      throw invalid(input, `"${segment}" may hold only letters, digits, "-", "_" and "."`);
    }
  }
  return { owner, name, fullName: `${owner}/${name}` };
}

function pathOnHost(raw: string, baseUrl: string | undefined): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(raw, "it is not a valid URL");
  }
  if (url.username || url.password) throw invalid(redactUserInfo(raw), "URLs with credentials are not accepted");
  if (!baseUrl) throw invalid(raw, "URLs are not accepted here, give owner/name");
  const base = new URL(baseUrl);
  if (url.protocol !== base.protocol || url.host !== base.host) {
    throw invalid(raw, `only repositories on ${base.host} are allowed`);
  }
  const basePath = base.pathname.replace(/\/+$/, "");
  if (!url.pathname.startsWith(`${basePath}/`)) throw invalid(raw, `only repositories under ${baseUrl} are allowed`);
  if (url.search || url.hash) throw invalid(raw, "query strings and fragments are not allowed");
  return decodeURIComponent(url.pathname.slice(basePath.length + 1)).replace(/\/+$/, "");
}

function redactUserInfo(raw: string): string {
  return raw.replace(/\/\/[^/@]*@/, "//***@");
}

function invalid(input: string, why: string): InvalidRepoNameError {
  return new InvalidRepoNameError(`"${input.slice(0, 200)}" is not a repository name: ${why}`);
}
