/** A Dockerfile read into stages of instructions: just enough of the syntax to check ours. */
export interface DockerInstruction {
  keyword: string;
  /** Flags such as `--from=deps` or `--chown=node:node`, by name. */
  flags: Record<string, string>;
  /** Arguments after the flags (exec form `["a","b"]` is parsed as JSON). */
  args: string[];
  /** The raw text after the keyword (continuations joined), for RUN. */
  text: string;
}

export interface DockerStage {
  from: string;
  name: string | undefined;
  instructions: DockerInstruction[];
}

function logicalLines(source: string): string[] {
  const lines: string[] = [];
  let current = "";
  for (const raw of source.split("\n")) {
    const line = raw.trimEnd();
    if (current === "" && (line.trim() === "" || line.trim().startsWith("#"))) continue;
    if (line.trim().startsWith("#")) continue;
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    lines.push((current + line).trim());
    current = "";
  }
  if (current.trim() !== "") lines.push(current.trim());
  return lines;
}

function parseInstruction(line: string): DockerInstruction {
  const space = line.search(/\s/);
  const keyword = line.slice(0, space).toUpperCase();
  let text = line.slice(space).trim();
  const flags: Record<string, string> = {};
  for (let flag = /^--([a-z-]+)=(\S+)\s+/.exec(text); flag; flag = /^--([a-z-]+)=(\S+)\s+/.exec(text)) {
    flags[flag[1]!] = flag[2]!;
    text = text.slice(flag[0].length);
  }
  const args = text.startsWith("[") ? (JSON.parse(text) as string[]) : text.split(/\s+/);
  return { keyword, flags, args, text };
}

export function parseDockerfile(source: string): DockerStage[] {
  const stages: DockerStage[] = [];
  // ARGs before the first FROM: their defaults stand in FROM lines (`FROM ${NODE_IMAGE}`).
  const globalArgs = new Map<string, string>();
  for (const line of logicalLines(source)) {
    const instruction = parseInstruction(line);
    if (instruction.keyword === "ARG" && stages.length === 0) {
      const [name, value = ""] = instruction.args[0]!.split("=");
      globalArgs.set(name!, value);
    } else if (instruction.keyword === "FROM") {
      const [raw, as, name] = instruction.args;
      const from = raw!.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_m, a?: string, b?: string) => globalArgs.get((a ?? b)!) ?? "",
      );
      stages.push({ from, name: as?.toUpperCase() === "AS" ? name : undefined, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile: ${instruction.keyword} before FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}
