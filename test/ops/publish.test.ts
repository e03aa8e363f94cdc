import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/**
 * The Gitea workflow publishes with the script CI builds with (`scripts/containers.sh`): what it
 * runs, checked without a container engine (`publish --dry-run` prints the commands).
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const workflow = parse(readFileSync(`${ROOT}.gitea/workflows/image.yml`, "utf8")) as {
  on: { push: { branches: string[]; tags: string[] } };
  jobs: Record<string, { steps: Array<{ run?: string }> }>;
};

describe(".gitea/workflows/image.yml", () => {
  it("publishes on every tag and on main with scripts/containers.sh publish", () => {
    expect(workflow.on.push).toEqual({ branches: ["main"], tags: ["v*"] });
    const runs = Object.values(workflow.jobs).flatMap((job) => job.steps.map((step) => step.run ?? ""));
    expect(
      runs.some((run) => /scripts\/containers\.sh publish "\$REGISTRY\/\$owner\/ratatoskr"/.test(run)),
    ).toBe(true);
    expect(readFileSync(`${ROOT}.ci/run`, "utf8")).toContain("scripts/containers.sh ci");
  });

  it("builds both images once and pushes each under every tag", () => {
    // The commands it would run, on stdout and stderr (the build's own output goes to stderr).
    const run = spawnSync(
      "bash",
      [
        `${ROOT}scripts/containers.sh`,
        "publish",
        "--dry-run",
        "gitea.example.com/acme/ratatoskr",
        "v1.4.0",
        "sha-abc1234",
      ],
      { env: { ...process.env, CONTAINER_ENGINE: "docker" }, encoding: "utf8" },
    );
    expect(run.status, run.stderr).toBe(0);
    const out = `${run.stdout}\n${run.stderr}`;
    const lines = out.split("\n").filter(Boolean);
    const builds = lines.filter((line) => line.startsWith("docker build"));
    expect(builds).toHaveLength(2);
    expect(builds[0]).toContain("--target production -t gitea.example.com/acme/ratatoskr:v1.4.0");
    expect(builds[0]).toContain("SERVICE_VERSION=v1.4.0");
    expect(builds[1]).toContain("-t gitea.example.com/acme/ratatoskr-egress:v1.4.0");
    expect(lines.filter((line) => line.startsWith("docker push")).sort()).toEqual(
      [
        "docker push gitea.example.com/acme/ratatoskr:v1.4.0",
        "docker push gitea.example.com/acme/ratatoskr-egress:v1.4.0",
        "docker push gitea.example.com/acme/ratatoskr:sha-abc1234",
        "docker push gitea.example.com/acme/ratatoskr-egress:sha-abc1234",
      ].sort(),
    );
  });
});
