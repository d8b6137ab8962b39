// A guard: no tool may touch secret files (.env, *.pem, id_rsa, …) by path.
// Guards only deny, and see the arguments only: content that leaks through
// other ways (a grep over a whole tree) is redact_tokens.ts's business.
import { tools } from "dsh";
import { isSecretPath } from "./lib/secrets";

// Arguments that name files or file patterns, in any tool.
const PATH_KEYS = ["path", "include", "pattern", "cwd"];

tools.guard((exec) => {
  const args = exec.arguments;
  if (!args || typeof args !== "object") return undefined;
  for (let i = 0; i < PATH_KEYS.length; i++) { // an index, not an iterator: cheaper, same keys in the same order
    const key = PATH_KEYS[i];
    const value = args[key];
    // grep's pattern is a regular expression, not a file name.
    if (typeof value !== "string" || (exec.name === "grep" && key === "pattern")) continue;
    if (isSecretPath(value)) return `${exec.name} may not touch ${value}: it is a secret file`;
  }
  // A shell command mentioning a secret file by name ("cat .env").
  if (exec.name === "shell" && typeof args.command === "string") {
    const word = args.command.split(/[\s;&|<>()'"`=]+/).find((w) => w !== "" && isSecretPath(w));
    if (word) return `shell may not touch ${word}: it is a secret file`;
  }
  return undefined;
});
