import type { Comment, Issue, PullRequest, Repository, User } from "gitea-js";

/** An issue or PR as the fake keeps it; `pull` is set on pull requests. */
export interface StoredIssue {
  issue: Issue;
  pull?: PullRequest;
}

function user(login: string, id: number): User {
  return { id, login, username: login, full_name: login } as User;
}

/**
 * Issues, pull requests and comments of every repository. Issues and PRs share one number
 * sequence per repository and comment ids are global, as in Gitea.
 */
export class IssueStore {
  private readonly issues = new Map<string, StoredIssue[]>();
  private readonly comments = new Map<number, { repo: string; number: number; comment: Comment }>();
  private readonly userIds = new Map<string, number>();
  private nextCommentId = 1000;

  constructor(private readonly baseUrl: () => string) {}

  userOf(login: string): User {
    let id = this.userIds.get(login.toLowerCase());
    if (id === undefined) {
      id = 5000 + this.userIds.size;
      this.userIds.set(login.toLowerCase(), id);
    }
    return user(login, id);
  }

  private listOf(repo: Repository): StoredIssue[] {
    const key = (repo.full_name ?? "").toLowerCase();
    let list = this.issues.get(key);
    if (!list) this.issues.set(key, (list = []));
    return list;
  }

  addIssue(repo: Repository, author: string, title: string, body = ""): Issue {
    const list = this.listOf(repo);
    const number = list.length + 1;
    const now = new Date().toISOString();
    const issue: Issue = {
      id: 100_000 + number,
      number,
      title,
      body,
      state: "open",
      user: this.userOf(author),
      html_url: `${repo.html_url}/issues/${number}`,
      url: `${repo.url}/issues/${number}`,
      repository: { id: repo.id, name: repo.name, full_name: repo.full_name, owner: repo.owner?.login },
      pull_request: null as unknown as Issue["pull_request"],
      comments: 0,
      created_at: now,
      updated_at: now,
    };
    list.push({ issue });
    return issue;
  }

  addPull(
    repo: Repository,
    author: string,
    fields: { title: string; body?: string; head: string; base: string },
  ): PullRequest {
    const issue = this.addIssue(repo, author, fields.title, fields.body ?? "");
    const htmlUrl = `${repo.html_url}/pulls/${issue.number}`;
    issue.html_url = htmlUrl;
    issue.pull_request = { merged: false, html_url: htmlUrl };
    const pull: PullRequest = {
      id: 200_000 + (issue.number ?? 0),
      number: issue.number,
      title: fields.title,
      body: fields.body ?? "",
      state: "open",
      merged: false,
      user: issue.user,
      html_url: htmlUrl,
      url: htmlUrl,
      head: { ref: fields.head, label: fields.head, repo },
      base: { ref: fields.base, label: fields.base, repo },
      created_at: issue.created_at,
      updated_at: issue.updated_at,
    };
    const stored = this.listOf(repo).find((s) => s.issue.number === issue.number);
    if (stored) stored.pull = pull;
    return pull;
  }

  find(repo: Repository, number: number): StoredIssue | undefined {
    return this.listOf(repo).find((s) => s.issue.number === number);
  }

  pulls(repo: Repository): PullRequest[] {
    return this.listOf(repo).flatMap((s) => (s.pull ? [s.pull] : []));
  }

  addComment(repo: Repository, number: number, author: string, body: string): Comment {
    const stored = this.find(repo, number);
    if (!stored) throw new Error(`${repo.full_name}#${number} does not exist`);
    const id = this.nextCommentId++;
    const now = new Date().toISOString();
    const comment: Comment = {
      id,
      body,
      user: this.userOf(author),
      html_url: `${stored.issue.html_url}#issuecomment-${id}`,
      issue_url: `${repo.html_url}/issues/${number}`,
      pull_request_url: stored.pull ? stored.pull.html_url : "",
      created_at: now,
      updated_at: now,
    };
    this.comments.set(id, { repo: (repo.full_name ?? "").toLowerCase(), number, comment });
    stored.issue.comments = (stored.issue.comments ?? 0) + 1;
    return comment;
  }

  comment(repo: Repository, id: number): Comment | undefined {
    const found = this.comments.get(id);
    return found && found.repo === (repo.full_name ?? "").toLowerCase() ? found.comment : undefined;
  }

  /** Where a comment lives: its issue/PR number. */
  numberOf(id: number): number | undefined {
    return this.comments.get(id)?.number;
  }

  editComment(repo: Repository, id: number, body: string): Comment | undefined {
    const found = this.comment(repo, id);
    if (!found) return undefined;
    found.body = body;
    // Later than its creation even within the same millisecond (the sweep tells edits by it).
    found.updated_at = new Date(Math.max(Date.now(), Date.parse(found.created_at ?? "") + 1)).toISOString();
    return found;
  }

  deleteComment(repo: Repository, id: number): boolean {
    if (!this.comment(repo, id)) return false;
    return this.comments.delete(id);
  }

  /** Comments of one issue/PR (or of the whole repository), oldest first. */
  listComments(repo: Repository, number?: number): Comment[] {
    const key = (repo.full_name ?? "").toLowerCase();
    return [...this.comments.values()]
      .filter((c) => c.repo === key && (number === undefined || c.number === number))
      .map((c) => c.comment)
      .sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
  }
}
