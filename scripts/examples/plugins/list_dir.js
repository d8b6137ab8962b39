// list_dir: list a directory of the workspace, directories first marked
// with a trailing "/", as a `search` card of paths.
import { defineTool, tools } from "dsh";
import { readDir } from "dsh/fs";

const DEFAULT_LIMIT = 500;

tools.register(defineTool({
  name: "list_dir",
  description: "List the entries of a workspace directory (names ending in / are directories).",
  parameters: {
    path: { type: "string", description: "The directory, relative to the workspace (default: the workspace)." },
    limit: { type: "integer", description: `At most this many entries (default ${DEFAULT_LIMIT}).` },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        path: { type: "string", required: true },
        entries: {
          type: "array", required: true,
          items: {
            type: "object", additionalProperties: false,
            properties: {
              name: { type: "string", required: true },
              type: { type: "string", enum: ["file", "dir", "symlink", "other"], required: true },
              size: { type: "integer", required: true },
            },
          },
        },
        total: { type: "integer", required: true },
        truncated: { type: "boolean", required: true },
      },
    },
    render: (args, value) => {
      if (value.total === 0) return [{ type: "text", text: `${value.path} is empty.` }];
      const lines = value.entries.map((e) => (e.type === "dir" ? `${e.name}/` : `${e.name}  (${e.size} bytes)`));
      if (value.truncated) lines.push(`(${value.total - value.entries.length} more entries not shown)`);
      return [{ type: "text", text: lines.join("\n") }];
    },
    presentationMeta: (args, value) => ({
      paths: value.entries.map((e) => (e.type === "dir" ? `${e.name}/` : e.name)),
      total: value.total,
      truncated: value.truncated,
    }),
  },
  isConcurrencySafe: () => true,
  timeoutMs: 10000,
  async execute(args, exec) {
    const listing = await readDir(args.path ?? ".", { limit: args.limit ?? DEFAULT_LIMIT, signal: exec.signal });
    // Directories first, then files, each by name.
    const entries = [...listing.entries].sort((a, b) =>
      (a.type === "dir") === (b.type === "dir") ? (a.name < b.name ? -1 : 1) : a.type === "dir" ? -1 : 1);
    return { path: listing.path, entries, total: listing.total, truncated: listing.truncated };
  },
  presentCall: (args) => ({ card: "generic", title: `List ${args.path ?? "."}`, kind: "read" }),
  presentResult: (args, result) => {
    if (result.isError) return undefined;
    return { card: "search", shape: "paths", title: `List ${args.path ?? "."}`, ...result.meta };
  },
}));
