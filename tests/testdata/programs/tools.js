// The tools of the hostile-program suite (TestHostilePrograms), in every
// case's scripts directory.
const { defineTool, tools } = require("dsh");
const fs = require("dsh/fs");
const text = { schema: { type: "string" }, render: (args, v) => [{ type: "text", text: v }] };
const json = { schema: { type: "json" }, render: (args, v) => [{ type: "text", text: JSON.stringify(v) }] };

// echo returns its text.
tools.register(defineTool({
  name: "echo", description: "Returns its text.", parameters: { text: { type: "string", required: true } },
  output: text, isConcurrencySafe: () => true,
  async execute(args) { return args.text; },
}));

// take accepts any value and says so: the target of argument caps and fan-outs.
tools.register(defineTool({
  name: "take", description: "Takes any value.", parameters: { v: { type: "json" } },
  output: text, isConcurrencySafe: () => true,
  async execute() { return "took"; },
}));

// touch writes the file "touched" in the workspace: a side effect a case
// can look for (no-file touched) to show that a call never ran.
tools.register(defineTool({
  name: "touch", description: "Writes the file touched.", parameters: {},
  output: text,
  async execute() { await fs.writeFile("touched", "touched\n"); return "touched"; },
}));

// hang never returns; it honors its signal, failing with "hang aborted".
tools.register(defineTool({
  name: "hang", description: "Never returns.", parameters: {},
  output: text, isConcurrencySafe: () => true,
  async execute(args, exec) {
    await new Promise((resolve, reject) => {
      if (exec.signal.aborted) reject(new Error("hang aborted"));
      exec.signal.addEventListener("abort", () => reject(new Error("hang aborted")));
    });
    return "never";
  },
}));

// fail throws "deliberate failure".
tools.register(defineTool({
  name: "fail", description: "Fails.", parameters: {},
  output: text,
  async execute() { throw new Error("deliberate failure"); },
}));

// keys returns the own keys of its value.
tools.register(defineTool({
  name: "keys", description: "Returns the own keys of its value.", parameters: { v: { type: "json" } },
  output: json,
  async execute(args) { return Object.keys(args.v); },
}));
