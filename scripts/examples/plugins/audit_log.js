// An observer: one structured log line per finished tool call, into the
// host's log (slog), tagged with this plugin. Arguments are logged redacted
// and shortened.
import { on, log } from "dsh";
import { redactText } from "./lib/secrets";

const MAX_ARGS = 200; // characters of the arguments' JSON kept

on("tools/result", (exec, result) => {
  let args = exec.arguments === undefined ? "(not JSON)" : redactText(JSON.stringify(exec.arguments)).text;
  if (args.length > MAX_ARGS) args = args.slice(0, MAX_ARGS) + "…";
  // Log fields must be JSON: absent values are left out, never undefined.
  /** @type {{ [key: string]: string }} */
  const fields = { tool: exec.name, callId: exec.callId, args, outcome: result.isError ? "error" : "ok" };
  if (exec.rootCallId !== exec.callId) fields.rootCallId = exec.rootCallId;
  if (exec.agent) fields.agent = exec.agent.id;
  if (result.isError) {
    if (result.error.info) fields.code = result.error.info.code;
    fields.error = redactText(result.error.message).text;
    log.warn("tool call failed", fields);
  } else {
    log.info("tool call", fields);
  }
});
