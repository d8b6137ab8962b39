// A policy: when the model makes the same call again and again (same tool,
// same arguments in any key order), remind it after the 3rd, 5th and 8th
// identical call with a context message attached to that result.
import { on } from "dsh";

const REMIND_AT = new Set([3, 5, 8]);
const MAX_KEYS = 1000; // calls remembered, oldest forgotten first
const counts = new Map(); // key → identical calls so far
let size = 0; // counts.size, kept here: a read of it is a call into the host

// JSON with object keys sorted at every level: equal arguments, equal text.
// Loops and + build the same text as map and join would for JSON values
// (every part is a string), with fewer calls into the host; one key needs
// no sort.
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

// A random version 4 UUID: context messages need an id.
function uuid() {
  const hex = [];
  for (let i = 0; i < 32; i++) hex.push(Math.floor(Math.random() * 16));
  hex[12] = 4;
  hex[16] = 8 + (hex[16] & 3);
  const s = hex.map((h) => h.toString(16)).join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

on("tools/post-execute", async (exec, result, next) => {
  const decision = await next();
  const key = `${exec.agent ? exec.agent.id : ""}\u0000${exec.name}\u0000${canonical(exec.arguments)}`;
  const n = (counts.get(key) || 0) + 1;
  if (n > 1) counts.delete(key); // re-insert: the Map's order is then least recently used first
  else size++;
  counts.set(key, n);
  if (size > MAX_KEYS) {
    counts.delete(counts.keys().next().value);
    size--;
  }
  if (!REMIND_AT.has(n)) return decision;
  /** @type {import("dsh").UserMessage} */
  const reminder = {
    id: uuid(),
    role: "user",
    content: [{
      type: "text",
      text: `Reminder: you have called ${exec.name} ${n} times with exactly these arguments. ` +
        "Repeating it will not change the result: use what you already have, or try something else.",
    }],
    source: { kind: "plugin", plugin: "repeat_reminder.js" },
  };
  return { ...decision, additionalContexts: [...(decision.additionalContexts || []), reminder] };
});
