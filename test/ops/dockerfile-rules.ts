import type { DockerStage } from "./dockerfile-parse.ts";

/**
 * Hadolint-style rules (no hadolint package exists in the registries this project uses), named
 * after the hadolint rule they mirror where there is one, plus this project's own.
 */
export interface RuleViolation {
  rule: string;
  message: string;
}

export function checkDockerfile(stages: DockerStage[]): RuleViolation[] {
  const found: RuleViolation[] = [];
  const flag = (rule: string, message: string) => found.push({ rule, message });
  const final = stages.at(-1);
  if (!final) return [{ rule: "DL3061", message: "no FROM" }];

  for (const stage of stages) {
    if (!stage.from.includes(":") && !stages.some((s) => s.name === stage.from))
      flag("DL3006", `FROM ${stage.from}: pin the image's tag`);
    if (/:latest$/.test(stage.from)) flag("DL3007", `FROM ${stage.from}: latest is not a version`);
    for (const i of stage.instructions) {
      if (i.keyword === "ADD") flag("DL3020", "use COPY, not ADD");
      if (i.keyword !== "RUN") continue;
      if (/(^|&&|;)\s*cd\s/.test(i.text)) flag("DL3003", `use WORKDIR, not cd: ${i.text}`);
      if (/apt-get install/.test(i.text) && !/--no-install-recommends/.test(i.text))
        flag("DL3015", "apt-get install without --no-install-recommends");
      if (/apt-get install/.test(i.text) && !/-y\b/.test(i.text))
        flag("DL3014", "apt-get install without -y");
      if (/apt-get (update|install)/.test(i.text) && !/rm -rf \/var\/lib\/apt\/lists/.test(i.text))
        flag("DL3009", "apt lists left in the layer");
      if (/npm install (-g|--global) \S+/.test(i.text) && !/npm install (-g|--global) \S+@\d/.test(i.text))
        flag("DL3016", "pin globally installed npm packages");
      if (/\bsudo\b/.test(i.text)) flag("DL3004", "no sudo");
    }
  }

  const users = final.instructions.filter((i) => i.keyword === "USER");
  const lastUser = users.at(-1)?.args[0];
  if (!lastUser || lastUser === "root" || lastUser === "0")
    flag("DL3002", "the final image must not run as root");
  for (const keyword of ["CMD", "ENTRYPOINT"]) {
    const last = final.instructions.filter((i) => i.keyword === keyword).at(-1);
    if (last && !last.text.trim().startsWith("["))
      flag("DL3025", `${keyword} in exec form (JSON), so signals reach it`);
  }
  const entrypoint = final.instructions.filter((i) => i.keyword === "ENTRYPOINT").at(-1)?.args ?? [];
  if (!/tini|dumb-init/.test(entrypoint[0] ?? ""))
    flag("R001", "an init (tini) as PID 1 forwards signals and reaps children");
  const cmd = final.instructions.filter((i) => i.keyword === "CMD").at(-1)?.args ?? [];
  if (cmd[0] !== "node")
    flag("R002", `CMD runs ${cmd[0]}, not node: a wrapper (pnpm, tsx) keeps SIGTERM from the service`);
  return found;
}
