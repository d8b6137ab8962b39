// The "dsh" module the floor benchmark bundles the example plugins against
// (BenchmarkExamplePolicySetGojaFloor): it only records what they register.
export const captured = { pre: [], post: [], results: [], guards: [], tools: [] };

export function on(event, listener) {
  switch (event) {
    case "tools/pre-execute":
      captured.pre.push(listener);
      break;
    case "tools/post-execute":
      captured.post.push(listener);
      break;
    case "tools/result":
      captured.results.push(listener);
      break;
    default:
      throw new Error(`the floor has no ${event}`);
  }
}

export const tools = {
  guard: (fn) => void captured.guards.push(fn),
  register: (definition) => void captured.tools.push(definition),
};

export const defineTool = (definition) => definition;

// A log line goes nowhere, as the engine benchmark's are below its level.
export const log = { debug() {}, info() {}, warn() {}, error() {} };
