// The pipeline of BenchmarkExamplePolicySetGojaFloor around the example
// plugins that the entry imported before it: the least the specification
// asks, and less. Each listener gets an execution object of its own and a
// next() promise; the body is awaited, then its renderer runs; the
// scheduler's isConcurrencySafe and the card's presentCall are called. The
// execution and result objects are not frozen, there is no guard, no
// conversion from Go and no engine, and every plugin shares one runtime.
import { captured } from "dsh";

const ALLOW = { kind: "allow" };
const ACCEPT = { kind: "accept" };
const agent = { id: "main" };

const execution = (callId, args) => ({ callId, rootCallId: callId, name: "word_count", arguments: args, agent });

function pre(k, callId, args) {
  if (k === captured.pre.length) return Promise.resolve(ALLOW);
  return captured.pre[k](execution(callId, args), () => pre(k + 1, callId, args));
}

function post(k, callId, args, result) {
  if (k === captured.post.length) return Promise.resolve(ACCEPT);
  return captured.post[k](execution(callId, args), result, () => post(k + 1, callId, args, result));
}

export async function call(callId, text) {
  const tool = captured.tools[0];
  const args = { text };
  tool.isConcurrencySafe(args);
  tool.presentCall(args);
  const decision = await pre(0, callId, args);
  if (decision.kind !== "allow") throw new Error(`denied: ${decision.reason}`);
  for (const guard of captured.guards) {
    const denial = guard(execution(callId, args));
    if (denial !== undefined) throw new Error(`guarded: ${denial}`);
  }
  const value = await tool.execute(args, execution(callId, args));
  const result = { isError: false, value, content: tool.output.render(args, value) };
  const d = await post(0, callId, args, result);
  const final = d.additionalContexts ? { ...result, additionalContexts: d.additionalContexts } : result;
  for (const observer of captured.results) observer(execution(callId, args), final);
  return final;
}
