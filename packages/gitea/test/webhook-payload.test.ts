import { HOSTILE_TEXTS } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import { isGiteaLogin, isGiteaRepoName, readDelivery } from "../src/index.ts";

const comment = {
  action: "created",
  issue: { number: 7, title: "Button", pull_request: null },
  comment: { id: 501, body: "/agent plan", user: { id: 3, login: "alice" }, html_url: "http://g/x" },
  repository: { name: "web", full_name: "acme/web", owner: { login: "acme" } },
  sender: { id: 3, login: "alice" },
  is_pull: false,
};

describe("readDelivery", () => {
  it("reads a created issue comment and a PR conversation comment", () => {
    expect(readDelivery("issue_comment", JSON.stringify(comment))).toEqual({
      kind: "comment-created",
      comment: {
        owner: "acme",
        repo: "web",
        target: "issue",
        number: 7,
        commentId: 501,
        body: "/agent plan",
        author: "alice",
      },
    });
    const onPr = { ...comment, is_pull: true, pull_request: { number: 7 } };
    expect(readDelivery("issue_comment", JSON.stringify(onPr))).toMatchObject({ comment: { target: "pr" } });
  });

  it("ignores edits, deletions, other events and review payloads (no comment, their own event type)", () => {
    expect(readDelivery("issue_comment", JSON.stringify({ ...comment, action: "edited" })).kind).toBe(
      "ignored",
    );
    expect(readDelivery("issue_comment", JSON.stringify({ ...comment, action: "deleted" })).kind).toBe(
      "ignored",
    );
    expect(readDelivery("push", JSON.stringify({ ref: "refs/heads/main" })).kind).toBe("ignored");
    const review = { action: "reviewed", review: { content: "/agent fix" }, repository: comment.repository };
    expect(readDelivery("pull_request_comment", JSON.stringify(review)).kind).toBe("ignored");
  });

  it("calls malformed: unparsable or non-object JSON, a comment event without its comment, nesting past any payload", () => {
    for (const body of ["{", "", "null", "[1]", '"x"'])
      expect(readDelivery("issue_comment", body).kind).toBe("malformed");
    const { comment: _dropped, ...noComment } = comment;
    for (const action of ["created", "edited"])
      expect(readDelivery("issue_comment", JSON.stringify({ ...noComment, action })).kind).toBe("malformed");
    expect(readDelivery("issue_comment", JSON.stringify({ ...comment, comment: "x" })).kind).toBe("malformed");
    const deep = JSON.stringify(comment).replace(/}$/, `,"x":${"[".repeat(5_000)}${"]".repeat(5_000)}}`);
    expect(readDelivery("issue_comment", deep).kind).toBe("malformed");
  });

  it("refuses ids past what is stored, and strips NUL from every text it keeps", () => {
    const tooBig = { ...comment, issue: { ...comment.issue, number: 2_147_483_648 } };
    expect(readDelivery("issue_comment", JSON.stringify(tooBig))).toEqual({
      kind: "invalid",
      why: expect.stringContaining("issue.number") as unknown,
    });
    const unsafeId = { ...comment, comment: { ...comment.comment, id: 2 ** 60 } };
    expect(readDelivery("issue_comment", JSON.stringify(unsafeId)).kind).toBe("invalid");
    const nul = {
      ...comment,
      comment: { ...comment.comment, body: "/agent plan\u0000 now", user: { id: 3, login: "al\u0000ice" } },
      repository: { ...comment.repository, name: "w\u0000eb" },
    };
    expect(readDelivery("issue_comment", JSON.stringify(nul))).toMatchObject({
      kind: "comment-created",
      comment: { body: "/agent plan now", author: "alice", repo: "web" },
    });
    const onlyNul = { ...comment, repository: { ...comment.repository, name: "\u0000" } };
    expect(readDelivery("issue_comment", JSON.stringify(onlyNul)).kind).toBe("invalid");
  });
});

// A login and a repository name reach prompts and status comments outside any untrusted block (S4).
describe("logins and repository names outside Gitea's characters", () => {
  it("takes the names Gitea allows", () => {
    for (const name of ["alice", "Bob.Smith", "gitea-actions", "a_b-c.d", "x".repeat(40)]) expect(isGiteaLogin(name), name).toBe(true);
    for (const name of ["shop", "my.repo-2_x", ".github", "r".repeat(100)]) expect(isGiteaRepoName(name), name).toBe(true);
  });

  const hostile = [...HOSTILE_TEXTS.map((h) => h.text), "alice bob", "@alice", "al\u200bice", "..", "x".repeat(101), "ａｌｉｃｅ"];
  for (const text of hostile) {
    it(`refuses ${JSON.stringify(text.slice(0, 40))} as the author, the owner and the repository`, () => {
      const deliveries = [
        { ...comment, comment: { ...comment.comment, user: { id: 3, login: text } } },
        { ...comment, repository: { ...comment.repository, owner: { login: text } } },
        { ...comment, repository: { ...comment.repository, name: text } },
      ];
      for (const delivery of deliveries) expect(readDelivery("issue_comment", JSON.stringify(delivery)).kind).toBe("invalid");
    });
  }
});
