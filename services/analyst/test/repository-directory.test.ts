import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@ratatoskr/runtime";
import { FakeGitea, freePort } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAnalystConfig } from "../src/config/analyst.config.ts";
import { GiteaRepositoryDirectory } from "../src/repositories/gitea-repository-directory.ts";
import { LocalRepositoryDirectory } from "../src/repositories/local-repository-directory.ts";
import { findMissingRepositories } from "../src/repositories/repository-check.ts";
import { createRepositoryDirectory } from "../src/repositories/repository-directory.factory.ts";
import { RepositoryCheckError } from "../src/repositories/repository-directory.ts";

let gitea: FakeGitea;
let gitRoot: string;

beforeAll(async () => {
  gitea = await new FakeGitea().start();
  gitea.addRepo("acme/web");
  gitRoot = await mkdtemp(join(tmpdir(), "ratatoskr-git-root-"));
  await mkdir(join(gitRoot, "demo", "hello.git"), { recursive: true });
  await writeFile(join(gitRoot, "demo", "hello.git", "HEAD"), "ref: refs/heads/main\n");
  await mkdir(join(gitRoot, "demo", "empty.git"), { recursive: true });
});
afterAll(async () => {
  await gitea?.stop();
  await rm(gitRoot, { recursive: true, force: true });
});

describe("Gitea repository directory", () => {
  it("finds an existing repository and not a missing one, sending the token", async () => {
    const directory = new GiteaRepositoryDirectory({ baseUrl: `${gitea.url}/`, token: gitea.token });
    expect(await directory.exists("acme/web")).toBe(true);
    expect(await directory.exists("ACME/Web")).toBe(true);
    expect(await directory.exists("acme/nope")).toBe(false);
    expect(gitea.requests.at(-1)).toEqual({
      method: "GET",
      path: "/api/v1/repos/acme/nope",
      authorized: true,
    });
  });

  it("throws (so the job retries) when the token is refused or Gitea is down", async () => {
    const refused = new GiteaRepositoryDirectory({ baseUrl: gitea.url, token: "wrong" });
    await expect(refused.exists("acme/web")).rejects.toThrow(/answered 401.*check GITEA_TOKEN/);
    const down = new GiteaRepositoryDirectory({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      token: "t",
    });
    await expect(down.exists("acme/web")).rejects.toBeInstanceOf(RepositoryCheckError);
  });
});

describe("local repository directory (demo mode)", () => {
  it("knows a bare repository by its HEAD, not by a directory name", async () => {
    const directory = new LocalRepositoryDirectory(gitRoot);
    expect(await directory.exists("demo/hello")).toBe(true);
    expect(await directory.exists("demo/empty")).toBe(false);
    expect(await directory.exists("demo/none")).toBe(false);
    expect(await directory.exists("nobody/hello")).toBe(false);
  });
});

describe("repository check", () => {
  it("reports missing ones in order, counting malformed names as missing without asking", async () => {
    const directory = new LocalRepositoryDirectory(gitRoot);
    expect(await findMissingRepositories(directory, ["demo/hello", "web", "demo/none"])).toEqual([
      "web",
      "demo/none",
    ]);
  });

  it("checks nothing without a configured directory", async () => {
    expect(await findMissingRepositories(undefined, ["any/thing"])).toEqual([]);
  });

  it("chooses Gitea, then the local root, else none with a warning", () => {
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (message: string) => void warnings.push(message) };
    const base = { giteaUrl: undefined, giteaToken: undefined, localGitRoot: undefined };
    expect(
      createRepositoryDirectory(
        { ...base, giteaUrl: gitea.url, giteaToken: "t", localGitRoot: gitRoot },
        logger,
      ),
    ).toBeInstanceOf(GiteaRepositoryDirectory);
    expect(createRepositoryDirectory({ ...base, localGitRoot: gitRoot }, logger)).toBeInstanceOf(
      LocalRepositoryDirectory,
    );
    expect(warnings).toEqual([]);
    expect(createRepositoryDirectory(base, logger)).toBeUndefined();
    expect(warnings[0]).toMatch(/not checked/);
  });
});

describe("analyst configuration", () => {
  it("has working defaults", () => {
    const config = loadAnalystConfig({});
    expect(config.opencode.url).toBe("http://127.0.0.1:4096");
    expect(config.analyst).toEqual({ idleTimeoutMs: 120_000, hardTimeoutMs: 600_000, maxQuestions: 3 });
  });

  it("refuses GITEA_URL without GITEA_TOKEN and a bad model pin", () => {
    expect(() => loadAnalystConfig({ GITEA_URL: "https://git.example.com" })).toThrow(ConfigError);
    expect(() => loadAnalystConfig({ OPENCODE_MODEL: "just-a-model" })).toThrow(/OPENCODE_MODEL/);
  });
});
