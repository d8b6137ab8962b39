// A policy: keep credentials (API keys such as sk-…, GitHub tokens ghp_…,
// AWS keys, bearer tokens, private keys) out of what the model sees. It
// runs after the other post-execute listeners and redacts their decision.
//
// A success whose value holds a token gets a redacted value: the engine
// re-validates it and re-renders content and meta from it, so the model's
// text and the user's card agree. Otherwise only the content is redacted
// (a failure's, or text a renderer made from the arguments).
import { on, type ContentBlock, type PostExecuteDecision, type UserMessage } from "dsh";
import { redactJSON } from "./lib/secrets";

function redactContent(content: ContentBlock[]): { content: ContentBlock[]; count: number } {
  const r = redactJSON(content as any);
  return { content: r.value as any as ContentBlock[], count: r.count };
}

// The decision's contexts, to carry over into the replacement.
function contexts(d: { additionalContexts?: UserMessage[] }): { additionalContexts?: UserMessage[] } {
  return d.additionalContexts ? { additionalContexts: d.additionalContexts } : {};
}

on("tools/post-execute", async (exec, result, next): Promise<PostExecuteDecision> => {
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
});
