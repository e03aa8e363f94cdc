import type { APIError } from "gitea-js";

/** Gitea's `{message, url}` error body; `url` points at the API docs, as Gitea's does. */
export function apiError(baseUrl: string, message: string): APIError {
  return { message, url: `${baseUrl}/api/swagger` };
}

export const GITEA_MESSAGES = {
  notFound: "The target couldn't be found.",
  tokenRequired: "token is required",
  badToken: "invalid username, password or token",
} as const;
