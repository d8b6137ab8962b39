// A policy for TestMCPNpm: refuse the imported filesystem server's
// write_file, with a reason that names this plugin's language.
import { on } from "dsh";

on("tools/pre-execute", async (exec, next) => {
  if (exec.name === "fs__write_file") {
    return {
      kind: "deny",
      reason: "fs__write_file is read-only here (JavaScript policy)",
      info: { name: "PolicyDenied", code: "READ_ONLY" },
    };
  }
  return next();
});
