// fetch_url: GET a web page through dsh/http (the operator's host allow-list
// applies) and give the model its text; HTML is reduced to plain text.
// Shows a `web` fetch card.
import { defineTool, tools } from "dsh";
import { fetch } from "dsh/http";

const DEFAULT_MAX_CHARS = 20000;

// A rough HTML-to-text: drop scripts, styles and tags, decode the common
// entities, collapse blank runs. Enough for reading, not a parser.
function htmlToText(html) {
  const entities = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
  return html
    .replace(/<(script|style|noscript)\b[\s\S]*?<\/\1\s*>/gi, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<\/?(p|div|br|li|tr|h[1-6]|section|article|header|footer|pre|blockquote)\b[^>]*>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&(#\d+|#x[0-9a-f]+|\w+);/gi, (m, e) => {
      if (e[0] === "#") {
        const cp = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        // Surrogates and out-of-range numbers are not characters: keep the text.
        return cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : m;
      }
      return Object.prototype.hasOwnProperty.call(entities, e.toLowerCase()) ? entities[e.toLowerCase()] : m;
    })
    .replace(/[ \t]+/g, " ")
    .replace(/\s*\n\s*/g, "\n")
    .trim();
}

tools.register(defineTool({
  name: "fetch_url",
  description: "Fetch a web page (HTTP GET) and return its text; HTML is converted to plain text.",
  parameters: {
    url: { type: "string", required: true, description: "An http or https URL." },
    maxChars: { type: "integer", description: `Keep at most this many characters of text (default ${DEFAULT_MAX_CHARS}).` },
  },
  output: {
    schema: {
      type: "object", additionalProperties: false,
      properties: {
        url: { type: "string", required: true, description: "The final URL, after redirects." },
        status: { type: "integer", required: true },
        statusText: { type: "string", required: true },
        contentType: { type: "string", required: true },
        text: { type: "string", required: true },
        truncated: { type: "boolean", required: true },
      },
    },
    render: (args, value) => [{
      type: "text",
      text: `${value.status} ${value.statusText} ${value.url}\n\n${value.text}${value.truncated ? "\n\n(truncated)" : ""}`,
    }],
    presentationMeta: (args, value) => ({ url: value.url, statusCode: value.status, truncated: value.truncated }),
  },
  isConcurrencySafe: () => true,
  timeoutMs: 35000,
  async execute(args, exec) {
    const res = await fetch(args.url, { timeoutMs: 30000, signal: exec.signal });
    const contentType = res.headers["content-type"] ?? "";
    let text = /html/i.test(contentType) ? htmlToText(res.body) : res.body;
    const max = Math.max(0, args.maxChars ?? DEFAULT_MAX_CHARS);
    const cut = text.length > max;
    if (cut) text = text.slice(0, max);
    return { url: res.url, status: res.status, statusText: res.statusText, contentType, text, truncated: cut || res.truncated };
  },
  presentCall: (args) => ({ card: "generic", title: `Fetch ${args.url}`, kind: "fetch" }),
  presentResult: (args, result) => {
    if (result.isError) return undefined;
    return { card: "web", kind: "fetch", title: `Fetch ${args.url}`, ...result.meta };
  },
}));
