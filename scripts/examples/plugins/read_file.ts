// read_file: read a text file of the workspace, a window of lines at a time,
// with numbered lines for the model and a `read` card for the user.
import { defineTool, tools, type ReadFileLine } from "dsh";
import { readFile } from "dsh/fs";

const DEFAULT_LIMIT = 2000;

// The card's data, computed from the value by output.presentationMeta (the
// result's meta) so that presentResult, which sees only the result, can
// build the card.
type ReadMeta = { path: string; offset: number; lines: ReadFileLine[]; totalLines: number };

// A syntax-highlighting hint for the card, by extension.
const LANGS = new Map(Object.entries({
  ts: "typescript", js: "javascript", mjs: "javascript", go: "go", py: "python", rs: "rust",
  json: "json", md: "markdown", sh: "shell", yaml: "yaml", yml: "yaml", lua: "lua", html: "html", css: "css",
}));

function splitLines(content: string): string[] {
  if (content === "") return [];
  const lines = content.split("\n");
  if (lines[lines.length - 1] === "") lines.pop(); // the last line's "\n"
  return lines.map((l) => l.replace(/\r$/, ""));
}

tools.register(defineTool({
  name: "read_file",
  description: "Read a text file of the workspace. Lines come numbered from 1; read long files a window at a time with offset and limit.",
  parameters: {
    path: { type: "string", required: true, description: "The file, relative to the workspace." },
    offset: { type: "integer", description: "The first line to read (1 = the first line of the file)." },
    limit: { type: "integer", description: `How many lines to read (default ${DEFAULT_LIMIT}).` },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        path: { type: "string", required: true },
        content: { type: "string", required: true, description: "The lines read, each ending with a newline." },
        offset: { type: "integer", required: true, description: "The number of the first line read." },
        lineCount: { type: "integer", required: true },
        totalLines: { type: "integer", required: true },
        truncated: { type: "boolean", required: true, description: "Whether lines after the window were left out." },
      },
    },
    render: (_args, value) => {
      const lines = splitLines(value.content);
      if (value.totalLines === 0) return [{ type: "text", text: `${value.path} is empty.` }];
      let text = lines.map((line, i) => `${String(value.offset + i).padStart(6)}\t${line}`).join("\n");
      if (lines.length === 0) text = `${value.path} has ${value.totalLines} lines; none from line ${value.offset}.`;
      else if (value.truncated) {
        const last = value.offset + lines.length - 1;
        text += `\n\n(lines ${value.offset}-${last} of ${value.totalLines}; read on with offset ${last + 1})`;
      }
      return [{ type: "text", text }];
    },
    presentationMeta: (_args, value): ReadMeta => ({
      path: value.path,
      offset: value.offset,
      lines: splitLines(value.content).map((text, i) => ({ number: value.offset + i, text })),
      totalLines: value.totalLines,
    }),
  },
  isConcurrencySafe: () => true,
  timeoutMs: 10000,
  async execute(args, exec) {
    const offset = Math.max(1, args.offset ?? 1);
    const limit = Math.max(0, args.limit ?? DEFAULT_LIMIT);
    const file = await readFile(args.path, { offset: offset - 1, limit, signal: exec.signal });
    return {
      path: file.path,
      content: file.content,
      offset,
      lineCount: file.lineCount,
      totalLines: file.totalLines,
      truncated: file.truncated,
    };
  },
  presentCall: (args) => ({
    card: "generic",
    title: `Read ${args.path}`,
    kind: "read",
    locations: [{ path: args.path, line: Math.max(1, args.offset ?? 1) }],
  }),
  presentResult: (_args, result) => {
    if (result.isError) return undefined; // no card: the UI shows the error text
    const meta = result.meta; // what presentationMeta returned
    const lang = LANGS.get(meta.path.split(".").pop() || "");
    return { card: "read", ...meta, ...(lang ? { lang } : {}) };
  },
}));
