// The work of the example policy set in front of word_count, as one plain
// script: what goja alone spends on it, without dsh (BenchmarkExamplePolicySetGojaFloor).
// The policies' and the tool's code is scripts/examples/plugins' own, the
// pipeline around them less than the specification asks for: execution and
// result objects (left unfrozen), a next() promise per listener, the async
// body, its renderer, the scheduler's isConcurrencySafe and the card's
// presentCall. No guard, no conversion from Go, one runtime, one entry per call.
"use strict";

// lib/secrets.ts
const TOKENS = [
  { kind: "private-key", pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g },
  { kind: "api-key", pattern: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "github-token", pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}/g },
  { kind: "aws-access-key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: "aws-secret-key", pattern: /(aws_secret_access_key\s*[=:]\s*["']?)[A-Za-z0-9/+=]{40}/gi },
  { kind: "slack-token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { kind: "bearer-token", pattern: /(\bBearer\s+)[A-Za-z0-9._~+/-]{16,}=*/g },
];
const HINT = /-----BEGIN |sk-|gh[pousr]_|github_pat_|A[KS]IA|aws_secret_access_key|xox[abprs]-|Bearer/i;
function redactText(text) {
  if (!HINT.test(text)) return { text, count: 0 };
  let count = 0;
  for (const { kind, pattern } of TOKENS) {
    text = text.replace(pattern, (_match, keep) => {
      count++;
      return (typeof keep === "string" ? keep : "") + `[REDACTED:${kind}]`;
    });
  }
  return { text, count };
}
function mayHoldToken(v) {
  if (typeof v === "string") return HINT.test(v);
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (mayHoldToken(v[i])) return true;
    return false;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) if (mayHoldToken(v[keys[i]])) return true;
  return false;
}
function redactJSON(value) {
  if (!mayHoldToken(value)) return { value, count: 0 };
  let count = 0;
  const walk = (v) => {
    if (typeof v === "string") {
      const r = redactText(v);
      count += r.count;
      return r.text;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out = {};
      for (const k of Object.keys(v)) out[k] = walk(v[k]);
      return out;
    }
    return v;
  };
  return { value: walk(value), count };
}
const SECRET_NAMES = [
  /^\.env$/,
  /^\.env\.(?!example$|sample$|template$|dist$).+/,
  /\.(pem|key|p12|pfx|jks|keystore)$/,
  /^id_(rsa|dsa|ecdsa|ed25519)$/,
  /^\.(netrc|pgpass|npmrc|pypirc)$/,
  /^credentials(\.json)?$/,
];
function isSecretPath(path) {
  const name = path.replace(/[/\\]+$/, "").split(/[/\\]/).pop() || "";
  return SECRET_NAMES.some((re) => re.test(name));
}

// deny_shell.js
const RULES = [
  { id: "rm-root", why: "recursive removal of /, ~ or $HOME", pattern: /\brm\s+(?:-[\w-]*\s+)*?(?:-\w*[rR]\w*|--recursive)\s+(?:-[\w-]*\s+)*(?:\/\*?|~\/?|\$HOME\/?|--no-preserve-root)(?=\s|$|;|&|\|)/ },
  { id: "pipe-to-shell", why: "piping a download into a shell", pattern: /\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b/ },
  { id: "mkfs", why: "formatting a file system", pattern: /\bmkfs(?:\.\w+)?\b/ },
  { id: "dd-device", why: "dd writing to a device", pattern: /\bdd\b[^;&|]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)/ },
  { id: "device-write", why: "redirecting output onto a disk device", pattern: />\s*\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*/ },
  { id: "fork-bomb", why: "a fork bomb", pattern: /(\w+|:)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}\s*;\s*\1/ },
  { id: "shutdown", why: "shutting the machine down", pattern: /(?:^|[;&|]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff)\b/ },
];
const denyShell = (exec, next) => {
  if (exec.name === "shell") {
    const command = exec.arguments && exec.arguments.command;
    if (typeof command === "string") {
      const rule = RULES.find((r) => r.pattern.test(command));
      if (rule) return { kind: "deny", reason: `shell command refused: ${rule.why}`, info: { name: "PolicyDenied", code: "SHELL_DENIED", reason: rule.id } };
    }
  }
  return next();
};

// ask_before_write.js
const askBeforeWrite = async (exec, next) => {
  const decision = await next();
  if (exec.name !== "write_file" || decision.kind !== "allow") return decision;
  const { path, content } = exec.arguments || {};
  if (typeof path !== "string" || typeof content !== "string") return decision;
  return { kind: "ask", reason: `writing ${path} needs approval`, displayReason: `Write ${content.length} characters to ${path}?` };
};

// protect_secrets.js
const PATH_KEYS = ["path", "include", "pattern", "cwd"];
const protectSecrets = (exec) => {
  const args = exec.arguments;
  if (!args || typeof args !== "object") return undefined;
  for (let i = 0; i < PATH_KEYS.length; i++) {
    const key = PATH_KEYS[i];
    const value = args[key];
    if (typeof value !== "string" || (exec.name === "grep" && key === "pattern")) continue;
    if (isSecretPath(value)) return `${exec.name} may not touch ${value}: it is a secret file`;
  }
  if (exec.name === "shell" && typeof args.command === "string") {
    const word = args.command.split(/[\s;&|<>()'"`=]+/).find((w) => w !== "" && isSecretPath(w));
    if (word) return `shell may not touch ${word}: it is a secret file`;
  }
  return undefined;
};

// redact_tokens.ts
function redactContent(content) {
  const r = redactJSON(content);
  return { content: r.value, count: r.count };
}
function contexts(d) {
  return d.additionalContexts ? { additionalContexts: d.additionalContexts } : {};
}
const redactTokens = async (exec, result, next) => {
  const d = await next();
  if (d.kind === "block") {
    const r = redactContent(d.feedback);
    return r.count > 0 ? { kind: "block", feedback: r.content, ...contexts(d) } : d;
  }
  if (d.value !== undefined) {
    const r = redactJSON(d.value);
    return r.count > 0 ? { kind: "accept", value: r.value, ...contexts(d) } : d;
  }
  if (d.content !== undefined) {
    const r = redactContent(d.content);
    return r.count > 0 ? { kind: "accept", content: r.content, ...contexts(d) } : d;
  }
  if (!result.isError) {
    const r = redactJSON(result.value);
    if (r.count > 0) return { kind: "accept", value: r.value, ...contexts(d) };
  }
  const r = redactContent(result.content);
  return r.count > 0 ? { kind: "accept", content: r.content, ...contexts(d) } : d;
};

// repeat_reminder.js
const REMIND_AT = new Set([3, 5, 8]);
const MAX_KEYS = 1000;
const counts = new Map();
let size = 0;
function canonical(v) {
  if (v === null || typeof v !== "object") return JSON.stringify(v === undefined ? null : v);
  let s;
  if (Array.isArray(v)) {
    s = "[";
    for (let i = 0; i < v.length; i++) s += (i > 0 ? "," : "") + canonical(v[i]);
    return s + "]";
  }
  const keys = Object.keys(v);
  if (keys.length > 1) keys.sort();
  s = "{";
  for (let i = 0; i < keys.length; i++) s += (i > 0 ? "," : "") + JSON.stringify(keys[i]) + ":" + canonical(v[keys[i]]);
  return s + "}";
}
function uuid() {
  const hex = [];
  for (let i = 0; i < 32; i++) hex.push(Math.floor(Math.random() * 16));
  hex[12] = 4;
  hex[16] = 8 + (hex[16] & 3);
  const s = hex.map((h) => h.toString(16)).join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
const repeatReminder = async (exec, result, next) => {
  const decision = await next();
  const key = `${exec.agent ? exec.agent.id : ""}\u0000${exec.name}\u0000${canonical(exec.arguments)}`;
  const n = (counts.get(key) || 0) + 1;
  if (n > 1) counts.delete(key);
  else size++;
  counts.set(key, n);
  if (size > MAX_KEYS) {
    counts.delete(counts.keys().next().value);
    size--;
  }
  if (!REMIND_AT.has(n)) return decision;
  const reminder = {
    id: uuid(),
    role: "user",
    content: [{ type: "text", text: `Reminder: you have called ${exec.name} ${n} times with exactly these arguments. ` + "Repeating it will not change the result: use what you already have, or try something else." }],
    source: { kind: "plugin", plugin: "repeat_reminder.js" },
  };
  return { ...decision, additionalContexts: [...(decision.additionalContexts || []), reminder] };
};

// audit_log.js (its log line goes to a function that keeps the last one)
let lastLog;
const log = { info: (msg, fields) => { lastLog = fields; }, warn: (msg, fields) => { lastLog = fields; } };
const MAX_ARGS = 200;
const auditLog = (exec, result) => {
  let args = exec.arguments === undefined ? "(not JSON)" : redactText(JSON.stringify(exec.arguments)).text;
  if (args.length > MAX_ARGS) args = args.slice(0, MAX_ARGS) + "…";
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
};

// word_count.ts
const wordCount = {
  render: (_args, value) => [{ type: "text", text: `${value.words} words` }],
  isConcurrencySafe: () => true,
  async execute(args) {
    const words = args.text.split(/\s+/).filter(Boolean);
    const count = args.unique ? new Set(words.map((w) => w.toLowerCase())).size : words.length;
    return { words: count };
  },
  presentCall: (args) => ({ card: "generic", title: "Count words", kind: "read" }),
};

// The pipeline, at its least: the objects the specification freezes are
// left unfrozen here (dsh freezes them from Go, property by property, which
// costs less than Object.freeze in a script but more than nothing), so this
// is a bound below any implementation.
const ALLOW = { kind: "allow" };
const ACCEPT = { kind: "accept" };
const agent = { id: "main" };
const execution = (callId, args) => ({ callId, rootCallId: callId, name: "word_count", arguments: args, agent });

// call makes one call; ordinary leaves out audit_log and repeat_reminder
// (BenchmarkExamplePolicyOrdinary's four).
async function call(callId, text, ordinary) {
  const args = { text };
  wordCount.isConcurrencySafe(args);
  wordCount.presentCall(args);
  const pre = await denyShell(execution(callId, args), () => askBeforeWrite(execution(callId, args), () => Promise.resolve(ALLOW)));
  if (pre.kind !== "allow") throw new Error("denied");
  if (protectSecrets(execution(callId, args)) !== undefined) throw new Error("guarded");
  const value = await wordCount.execute(args, execution(callId, args));
  const result = { isError: false, value, content: wordCount.render(args, value) };
  const post = await redactTokens(execution(callId, args), result, ordinary ? () => Promise.resolve(ACCEPT)
    : () => repeatReminder(execution(callId, args), result, () => Promise.resolve(ACCEPT)));
  const final = post.additionalContexts ? { ...result, additionalContexts: post.additionalContexts } : result;
  if (!ordinary) auditLog(execution(callId, args), final);
  return final;
}
call;
