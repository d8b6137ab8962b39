// A policy: deny shell commands that remove recursively, with a coded denial.
const { on } = require("dsh");

on("tools/pre-execute", async (exec, next) => {
  const command = exec.arguments && exec.arguments.command;
  if (exec.name === "shell" && typeof command === "string" && /\brm\s+-rf\b/.test(command)) {
    return {
      kind: "deny",
      reason: "rm -rf is not allowed here",
      info: { name: "PolicyDenied", code: "SHELL_DENIED" },
    };
  }
  return next();
});
