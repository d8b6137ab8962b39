// Shared helpers for the secret-handling policies (protect_secrets.js,
// redact_tokens.ts, audit_log.js). Files under lib/ are modules to import,
// never loaded as plugins.
import type { JsonValue } from "dsh";

// Credentials that look the same everywhere. Each pattern is global; keep
// (group 1), when present, is a prefix left in place ("Bearer ").
const TOKENS: { kind: string; pattern: RegExp }[] = [
  { kind: "private-key", pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g },
  { kind: "api-key", pattern: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "github-token", pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}/g },
  { kind: "aws-access-key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: "aws-secret-key", pattern: /(aws_secret_access_key\s*[=:]\s*["']?)[A-Za-z0-9/+=]{40}/gi },
  { kind: "slack-token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { kind: "bearer-token", pattern: /(\bBearer\s+)[A-Za-z0-9._~+/-]{16,}=*/g },
];

/** Replaces every token in text by [REDACTED:<kind>]; count says how many. */
export function redactText(text: string): { text: string; count: number } {
  let count = 0;
  for (const { kind, pattern } of TOKENS) {
    text = text.replace(pattern, (_match: string, keep?: unknown) => {
      count++;
      return (typeof keep === "string" ? keep : "") + `[REDACTED:${kind}]`;
    });
  }
  return { text, count };
}

/** redactText applied to every string of a JSON value (a fresh copy). */
export function redactJSON(value: JsonValue): { value: JsonValue; count: number } {
  let count = 0;
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === "string") {
      const r = redactText(v);
      count += r.count;
      return r.text;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: { [key: string]: JsonValue } = {};
      for (const k of Object.keys(v)) out[k] = walk(v[k]);
      return out;
    }
    return v;
  };
  const redacted = walk(value);
  return { value: redacted, count };
}

// Files that hold credentials, by name. Templates such as .env.example are
// meant to be shared and stay readable.
const SECRET_NAMES = [
  /^\.env$/,
  /^\.env\.(?!example$|sample$|template$|dist$).+/,
  /\.(pem|key|p12|pfx|jks|keystore)$/,
  /^id_(rsa|dsa|ecdsa|ed25519)$/,
  /^\.(netrc|pgpass|npmrc|pypirc)$/,
  /^credentials(\.json)?$/,
];

/** Whether path (or glob pattern) names a secret file by its last segment. */
export function isSecretPath(path: string): boolean {
  const name = path.replace(/[/\\]+$/, "").split(/[/\\]/).pop() || "";
  return SECRET_NAMES.some((re) => re.test(name));
}
