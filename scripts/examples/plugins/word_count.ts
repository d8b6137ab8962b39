// word_count: count the words of a text. A TypeScript tool plugin: dsh
// transforms it with esbuild and runs it in goja.
import { defineTool, tools } from "dsh";

interface Args {
  text: string;
  unique?: boolean;
}

tools.register(defineTool({
  name: "word_count",
  description: "Count the words in a text.",
  parameters: {
    text: { type: "string", required: true, description: "The text to count." },
    unique: { type: "boolean", description: "Count distinct words only (case-insensitive)." },
  },
  output: {
    schema: {
      type: "object",
      additionalProperties: false,
      properties: { words: { type: "integer", required: true } },
    },
    render: (_args: Args, value: { words: number }) => [{ type: "text", text: `${value.words} words` }],
  },
  isConcurrencySafe: () => true,
  timeoutMs: 2000,
  async execute(args: Args) {
    const words = args.text.split(/\s+/).filter(Boolean);
    const count = args.unique ? new Set(words.map((w) => w.toLowerCase())).size : words.length;
    return { words: count };
  },
  presentCall: (args: Args) => ({ card: "generic", title: "Count words", kind: "read" }),
}));
