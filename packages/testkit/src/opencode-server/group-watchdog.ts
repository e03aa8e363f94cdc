import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

/**
 * `sh -c WATCHDOG <label> <root> <command> <args…>`. The shell leads a new process group, runs the
 * command in it and, in a background branch, reads its stdin: a pipe whose other end only the
 * parent Node process holds (as fd 3: a background list's stdin is /dev/null). However the parent ends — a handled signal, a crash, SIGKILL, where
 * no handler runs — the kernel closes that end, `cat` sees end of file, and the branch sends
 * SIGTERM to the group, gives the command 3 s, removes `<root>` and SIGKILLs what is left of the
 * group (itself last). The shell and the branch ignore TERM/INT/HUP (set after the command was
 * started, which keeps the defaults), so a SIGTERM to the group stops the command, the shell
 * then exits with its status, and the branch lives on until its last SIGKILL.
 */
const WATCHDOG = `root=$1; shift
exec 3<&0
"$@" </dev/null 3<&- &
child=$!
trap '' TERM INT HUP
{
  cat <&3 >/dev/null
  kill -TERM -$$ 2>/dev/null
  i=0
  while kill -0 "$child" 2>/dev/null && [ "$i" -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
  [ -n "$root" ] && rm -rf "$root"
  kill -KILL -$$
} &
wait "$child"`;

export interface WatchedSpawnOptions extends Pick<SpawnOptions, "env" | "cwd"> {
  /** A directory the watchdog removes once the parent is gone (the command's temp root). */
  removeOnParentExit?: string;
}

/**
 * Spawns `file args` as the real work of a new process group that cannot outlive this process:
 * `killGroup(child, signal)` (`process.kill(-child.pid)`) reaches the command and everything it
 * started, and the watchdog does the same by itself when this process dies without doing so.
 * stdout/stderr are piped; stdin is the watchdog's pipe and must be left alone.
 */
export function spawnWatched(
  file: string,
  args: readonly string[],
  options: WatchedSpawnOptions = {},
): ChildProcess {
  return spawn(
    "/bin/sh",
    ["-c", WATCHDOG, "ratatoskr-watchdog", options.removeOnParentExit ?? "", file, ...args],
    {
      ...(options.env ? { env: options.env } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
}

/** Sends `signal` to the child's whole process group; a group already gone is not an error. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // group already gone
  }
}
