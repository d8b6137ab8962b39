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

// Text that every token above holds, whatever the rest of the token ("sk-"
// for an api-key, "Bearer" for a bearer-token…): a text that does not match
// HINT (the common case) holds no token, so redactText leaves it alone with
// one test instead of seven replacements; one that matches goes through the
// patterns as before. Compiled with "i" it takes whatever the case-sensitive
// alternatives take, and aws-secret-key's case variants. The patterns only
// replace what they match, so a text none of them matches stays unchanged
// from the first to the last: no later pattern can match either.
const HINT = /-----BEGIN |sk-|gh[pousr]_|github_pat_|A[KS]IA|aws_secret_access_key|xox[abprs]-|Bearer/i;

/** Replaces every token in text by [REDACTED:<kind>]; count says how many. */
export function redactText(text: string): { text: string; count: number } {
  if (!HINT.test(text)) return { text, count: 0 };
  let count = 0;
  for (const { kind, pattern } of TOKENS) {
    text = text.replace(pattern, (_match: string, keep?: unknown) => {
      count++;
      return (typeof keep === "string" ? keep : "") + `[REDACTED:${kind}]`;
    });
  }
  return { text, count };
}

// Whether some string of a JSON value (keys left out) matches HINT.
function mayHoldToken(v: JsonValue): boolean {
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

/**
 * redactText applied to every string of a JSON value (a fresh copy); count
 * says how many tokens. When no string may hold one, value itself comes
 * back with count 0 (nothing to copy: callers use the copy only when count
 * is positive).
 */
export function redactJSON(value: JsonValue): { value: JsonValue; count: number } {
  if (!mayHoldToken(value)) return { value, count: 0 };
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
