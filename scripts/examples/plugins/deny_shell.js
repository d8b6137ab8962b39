// A policy: refuse dangerous shell commands before they run. A denial's
// info carries a code for programs and, as info.reason, the rule's id.
// Patterns catch the usual accidents, not a determined adversary: for that,
// run the shell tool in a sandbox.
import { on } from "dsh";

const RULES = [
  {
    id: "rm-root",
    why: "recursive removal of /, ~ or $HOME",
    // rm with -r/-R/--recursive (in any flag group) whose target is /, /*, ~ or $HOME.
    pattern: /\brm\s+(?:-[\w-]*\s+)*?(?:-\w*[rR]\w*|--recursive)\s+(?:-[\w-]*\s+)*(?:\/\*?|~\/?|\$HOME\/?|--no-preserve-root)(?=\s|$|;|&|\|)/,
  },
  {
    id: "pipe-to-shell",
    why: "piping a download into a shell",
    pattern: /\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b/,
  },
  { id: "mkfs", why: "formatting a file system", pattern: /\bmkfs(?:\.\w+)?\b/ },
  {
    id: "dd-device",
    why: "dd writing to a device",
    pattern: /\bdd\b[^;&|]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)/,
  },
  {
    id: "device-write",
    why: "redirecting output onto a disk device",
    pattern: />\s*\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*/,
  },
  {
    id: "fork-bomb",
    why: "a fork bomb",
    pattern: /(\w+|:)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}\s*;\s*\1/,
  },
  { id: "shutdown", why: "shutting the machine down", pattern: /(?:^|[;&|]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff)\b/ },
];

// A plain function, not async: it has nothing to await, and returning
// next()'s own promise lets the host skip a promise of its own per call.
on("tools/pre-execute", (exec, next) => {
  // The name first: the host converts a listener's exec.arguments on first
  // read, so other tools' calls pass without that cost. Reading them has
  // no effect, so skipping the read changes no decision.
  if (exec.name === "shell") {
    const command = exec.arguments && exec.arguments.command;
    if (typeof command === "string") {
      const rule = RULES.find((r) => r.pattern.test(command));
      if (rule) {
        return {
          kind: "deny",
          reason: `shell command refused: ${rule.why}`,
          info: { name: "PolicyDenied", code: "SHELL_DENIED", reason: rule.id },
        };
      }
    }
  }
  return next();
});
