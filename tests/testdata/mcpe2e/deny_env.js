// A policy for TestMCPE2E, in front of the imported servers served by
// dsh serve over stdio: refuse server-everything's get-env (it would show
// the server's environment to the model), allow every other call.
import { on } from "dsh";

on("tools/pre-execute", async (exec, next) => {
  if (exec.name === "ev__get-env") {
    return {
      kind: "deny",
      reason: "ev__get-env would show the server's environment (JavaScript policy)",
      info: { name: "PolicyDenied", code: "ENV_HIDDEN" },
    };
  }
  return next();
});
