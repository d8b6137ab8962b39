// grep: search the lines of workspace files for a JavaScript regular
// expression. Files are found with glob and read with readFile; binary and
// oversized files are skipped. Matches come as a `search` card.
import { defineTool, tools } from "dsh";
import { glob, readFile } from "dsh/fs";
import { join } from "dsh/path";

const DEFAULT_LIMIT = 100; // matches shown
const MAX_LINE = 300; // characters kept of a matched line

tools.register(defineTool({
  name: "grep",
  description: "Search file contents for a regular expression (JavaScript syntax), line by line. Shows path:line: text.",
  parameters: {
    pattern: { type: "string", required: true, description: 'A regular expression, such as "func \\\\w+Test".' },
    path: { type: "string", description: "The directory to search, relative to the workspace (default: the workspace)." },
    include: { type: "string", description: 'A glob of the files to search, relative to path (default "**/*").' },
    ignoreCase: { type: "boolean" },
    limit: { type: "integer", description: `At most this many matches (default ${DEFAULT_LIMIT}).` },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        files: {
          type: "array", required: true,
          items: {
            type: "object", additionalProperties: false,
            properties: {
              path: { type: "string", required: true },
              matches: {
                type: "array", required: true,
                items: {
                  type: "object", additionalProperties: false,
                  properties: { lineNumber: { type: "integer", required: true }, line: { type: "string", required: true } },
                },
              },
            },
          },
        },
        total: { type: "integer", required: true, description: "Every matching line, shown or not." },
        truncated: { type: "boolean", required: true },
      },
    },
    render: (args, value) => {
      if (value.total === 0 && !value.truncated) return [{ type: "text", text: `No lines match /${args.pattern}/.` }];
      const lines = [];
      for (const f of value.files) for (const m of f.matches) lines.push(`${f.path}:${m.lineNumber}: ${m.line}`);
      if (value.total > lines.length) lines.push(`(${value.total - lines.length} more matches not shown; narrow the search)`);
      else if (value.truncated) lines.push("(not every file was searched; narrow path or include)");
      return [{ type: "text", text: lines.join("\n") }];
    },
    presentationMeta: (args, value) => value,
  },
  isConcurrencySafe: () => true,
  timeoutMs: 60000,
  async execute(args, exec) {
    let re;
    try {
      re = new RegExp(args.pattern, args.ignoreCase ? "i" : "");
    } catch (err) {
      throw new Error(`invalid pattern /${args.pattern}/: ${err.message}`);
    }
    const limit = args.limit ?? DEFAULT_LIMIT;
    const dir = args.path ?? ".";
    const found = await glob(args.include ?? "**/*", { cwd: dir, signal: exec.signal });
    const files = [];
    let total = 0, shown = 0;
    for (const rel of found.paths) {
      exec.signal.throwIfAborted();
      if (rel.split("/").some((seg) => seg === ".git" || seg === "node_modules")) continue;
      const path = dir === "." ? rel : join(dir, rel);
      let file;
      try {
        file = await readFile(path, { signal: exec.signal });
      } catch (err) {
        // Directories, binary files and files over the read limit.
        if (["EISDIR", "EBINARY", "ETOOBIG", "EINVAL"].includes(err.code)) continue;
        throw err;
      }
      const matches = [];
      file.content.split("\n").forEach((line, i) => {
        if (!re.test(line)) return;
        total++;
        if (shown >= limit) return;
        shown++;
        matches.push({ lineNumber: i + 1, line: line.replace(/\r$/, "").slice(0, MAX_LINE) });
      });
      if (matches.length > 0) files.push({ path, matches });
    }
    return { files, total, truncated: total > shown || found.truncated };
  },
  presentCall: (args) => ({ card: "generic", title: `Grep /${args.pattern}/`, kind: "search" }),
  presentResult: (args, result) => {
    if (result.isError) return undefined;
    return { card: "search", shape: "matches", title: `Grep /${args.pattern}/`, ...result.meta };
  },
}));
