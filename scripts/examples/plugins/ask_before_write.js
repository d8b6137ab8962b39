// A policy: every write_file call asks the user first (through the
// approval service: a terminal prompt, an MCP elicitation). A denial from a
// later listener wins over the question.
import { on } from "dsh";

on("tools/pre-execute", async (exec, next) => {
  const decision = await next();
  if (exec.name !== "write_file" || decision.kind !== "allow") return decision;
  const { path, content } = exec.arguments || {};
  if (typeof path !== "string" || typeof content !== "string") return decision; // invalid: the tool refuses it
  return {
    kind: "ask",
    // Also the denial's message when nobody can be asked.
    reason: `writing ${path} needs approval`,
    displayReason: `Write ${content.length} characters to ${path}?`,
  };
});
