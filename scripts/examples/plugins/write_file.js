// write_file: create or overwrite a text file of the workspace. It reads the
// previous content first, so the result's `diff` card shows what changed.
// ask_before_write.js puts every call to the user first.
import { defineTool, tools } from "dsh";
import { readFile, writeFile } from "dsh/fs";

// The previous text, or null for a new file or one without a readable
// before-image (binary, or too big to read).
async function previousText(path, signal) {
  try {
    return (await readFile(path, { signal })).content;
  } catch (err) {
    if (["ENOENT", "EBINARY", "ETOOBIG"].includes(err.code)) return null;
    throw err;
  }
}

tools.register(defineTool({
  name: "write_file",
  description: "Write a text file of the workspace, replacing its content; missing parent directories are created.",
  parameters: {
    path: { type: "string", required: true, description: "The file, relative to the workspace." },
    content: { type: "string", required: true, description: "The file's complete new content." },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        path: { type: "string", required: true },
        size: { type: "integer", required: true, description: "Bytes written." },
        created: { type: "boolean", required: true },
        // Kept in the value so presentationMeta (which sees args and value
        // only) can build the diff, and so a program can undo the write.
        oldText: { oneOf: [{ type: "string" }, { type: "null" }], required: true },
      },
    },
    render: (args, value) => [{
      type: "text",
      text: `${value.created ? "Created" : "Wrote"} ${value.path} (${value.size} bytes).`,
    }],
    presentationMeta: (args, value) => ({
      diffs: [{ path: value.path, oldText: value.oldText, newText: args.content }],
    }),
  },
  // Writes must not run in parallel with other calls; this is the default,
  // spelled out.
  isConcurrencySafe: () => false,
  timeoutMs: 10000,
  async execute(args, exec) {
    const oldText = await previousText(args.path, exec.signal);
    const written = await writeFile(args.path, args.content, { createDirs: true, signal: exec.signal });
    return { path: written.path, size: written.size, created: written.created, oldText };
  },
  // Presenters must be pure and quick: the pending card cannot read the
  // file, so it shows the new text without a before-image.
  presentCall: (args) => ({
    card: "diff",
    title: `Write ${args.path}`,
    diffs: [{ path: args.path, oldText: null, newText: args.content }],
    locations: [{ path: args.path }],
  }),
  presentResult: (args, result) => {
    if (result.isError) return undefined;
    return { card: "diff", title: `Wrote ${args.path}`, diffs: result.meta.diffs };
  },
}));
