/** Gitea text is Markdown: what its reader sees (the sanitizer lives in contracts, beside the fences). */
export { visibleText } from "@ratatoskr/contracts";
