// shell: run a command line with `sh -c` in the workspace. dsh/process only
// runs argv vectors; handing the line to sh is this plugin's choice, so the
// model can use pipes and redirections. deny_shell.js refuses the dangerous
// ones. Shows a `terminal` card.
import { defineTool, tools } from "dsh";
import { run } from "dsh/process";

const DEFAULT_TIMEOUT_MS = 60000;
const MAX_TIMEOUT_MS = 600000;

// The text of a run's end: its exit status, signal or timeout.
function ending(value, timeoutMs) {
  if (value.timedOut) return `timed out after ${timeoutMs}ms`;
  if (value.signal !== null) return `killed by ${value.signal}`;
  return `exit status ${value.exitCode}`;
}

tools.register(defineTool({
  name: "shell",
  description: "Run a shell command (sh -c) in the workspace and return its output and exit status.",
  parameters: {
    command: { type: "string", required: true, description: "The command line, for example \"go test ./...\"." },
    cwd: { type: "string", description: "The working directory, relative to the workspace (default: the workspace)." },
    timeoutMs: { type: "integer", description: `Kill the command after this many milliseconds (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}).` },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        exitCode: { oneOf: [{ type: "integer" }, { type: "null" }], required: true },
        signal: { oneOf: [{ type: "string" }, { type: "null" }], required: true },
        stdout: { type: "string", required: true },
        stderr: { type: "string", required: true },
        timedOut: { type: "boolean", required: true },
        truncated: { type: "boolean", required: true, description: "Whether output past the cap was dropped." },
      },
    },
    render: (args, value) => {
      let text = value.stdout;
      if (value.stderr !== "") text += (text === "" || text.endsWith("\n") ? "" : "\n") + "[stderr]\n" + value.stderr;
      if (text !== "" && !text.endsWith("\n")) text += "\n";
      text += `[${ending(value, timeout(args))}${value.truncated ? ", output truncated" : ""}]`;
      return [{ type: "text", text }];
    },
    presentationMeta: (args, value) => ({
      output: value.stdout + value.stderr,
      exitCode: value.exitCode,
      signal: value.signal,
    }),
  },
  // Commands change the world: never run one in parallel with other calls.
  isConcurrencySafe: () => false,
  // A backstop for the host's timeout wrapper: the command's own timeout
  // (timeoutMs below) fires first and keeps the output so far.
  timeoutMs: MAX_TIMEOUT_MS + 10000,
  async execute(args, exec) {
    const r = await run(["sh", "-c", args.command], {
      ...(args.cwd === undefined ? {} : { cwd: args.cwd }),
      timeoutMs: timeout(args),
      signal: exec.signal,
    });
    return { exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut, truncated: r.truncated };
  },
  presentCall: (args) => ({ card: "terminal", title: args.command, ...(args.cwd === undefined ? {} : { cwd: args.cwd }) }),
  presentResult: (args, result) => {
    if (result.isError) return undefined;
    const { output, exitCode, signal } = result.meta;
    return {
      card: "terminal",
      output,
      ...(exitCode === null ? {} : { exitCode }),
      ...(signal === null ? {} : { signal }),
    };
  },
}));

function timeout(args) {
  return Math.min(Math.max(1, args.timeoutMs ?? DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS);
}
