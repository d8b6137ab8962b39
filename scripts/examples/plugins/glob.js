// glob: find workspace files by name pattern, as a `search` card of paths.
import { defineTool, tools } from "dsh";
import { glob } from "dsh/fs";

const DEFAULT_LIMIT = 200;

tools.register(defineTool({
  name: "glob",
  description: "Find files by glob pattern: ** matches any depth, * and ? within a name, {a,b} alternatives. Paths are sorted.",
  parameters: {
    pattern: { type: "string", required: true, description: 'For example "**/*.go" or "src/{a,b}/*.ts".' },
    path: { type: "string", description: "The directory to search from, relative to the workspace (default: the workspace)." },
    limit: { type: "integer", description: `At most this many paths (default ${DEFAULT_LIMIT}).` },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        paths: { type: "array", items: { type: "string" }, required: true },
        total: { type: "integer", required: true, description: "How many paths matched." },
        truncated: { type: "boolean", required: true },
      },
    },
    render: (args, value) => {
      if (value.total === 0) return [{ type: "text", text: `No files match ${args.pattern}.` }];
      let text = value.paths.join("\n");
      if (value.truncated) text += `\n(${value.total - value.paths.length} more not shown)`;
      return [{ type: "text", text }];
    },
    presentationMeta: (args, value) => value,
  },
  isConcurrencySafe: () => true,
  timeoutMs: 30000,
  async execute(args, exec) {
    const found = await glob(args.pattern, {
      ...(args.path === undefined ? {} : { cwd: args.path }),
      limit: args.limit ?? DEFAULT_LIMIT,
      signal: exec.signal,
    });
    return { paths: found.paths, total: found.total, truncated: found.truncated };
  },
  presentCall: (args) => ({ card: "generic", title: `Glob ${args.pattern}`, kind: "search" }),
  presentResult: (args, result) => {
    if (result.isError) return undefined;
    return { card: "search", shape: "paths", title: `Glob ${args.pattern}`, ...result.meta };
  },
}));
