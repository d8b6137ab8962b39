// The MCP client of TestMCPE2E, written with the official TypeScript SDK
// (@modelcontextprotocol/sdk). It reports facts as one JSON object on
// standard output and leaves the judging to the Go test.
//
//   node client.mjs CONFIG.json
//
// CONFIG.mode is "direct" or "gateway":
//
// direct: connect to each server of CONFIG.servers ({name: {command, args,
// env}}) over stdio, once as a client that declares roots and elicitation
// (what dsh's import client declares) and once as one that declares every
// capability, and report each server's tools/list under each:
// {servers: {name: {declared: [tool...], every: [tool...]}}}, a tool being
// {name, taskSupport}.
//
// gateway: connect to dsh serve (CONFIG.stdio = {command, args, cwd}, or
// CONFIG.url), poll tools/list until every name of CONFIG.want is served
// (dsh connects its imports in the background; see below for when it
// stops waiting), then make the calls of CONFIG.calls in order, answering elicitations
// with CONFIG.elicitAnswer, and report {served, prompts, missing, calls:
// {label: {isError, text} or {protocolError}}, elicitations: [{message,
// properties}]}.
//
// The SDK is imported from CONFIG.sdk (the folder of its package.json) by
// file URL: ES modules ignore NODE_PATH, and the packages live outside the
// repository.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const sdk = (file) => import(pathToFileURL(join(config.sdk, "dist", "esm", file)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema, ListRootsRequestSchema } = await sdk("types.js");

const info = { name: "dsh-e2e", version: "1.0.0" };

// listAll follows tools/list (or prompts/list) pagination.
async function listAll(list) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor === undefined ? {} : { cursor });
    items.push(...(page.tools ?? page.prompts));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

// stdio is a transport to a server's command; its standard error goes to
// ours, where the Go test shows it when it fails.
function stdio({ command, args, env, cwd }) {
  return new StdioClientTransport({ command, args, cwd, env: { ...process.env, ...(env ?? {}) }, stderr: "inherit" });
}

async function direct() {
  const capabilitySets = {
    declared: { roots: { listChanged: true }, elicitation: { form: {} } },
    every: {
      roots: { listChanged: true },
      elicitation: { form: {}, url: {} },
      sampling: {},
      tasks: { requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } },
    },
  };
  const servers = {};
  for (const [name, server] of Object.entries(config.servers)) {
    servers[name] = {};
    for (const [set, capabilities] of Object.entries(capabilitySets)) {
      const client = new Client(info, { capabilities });
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
      await client.connect(stdio(server));
      const tools = await listAll((p) => client.listTools(p));
      servers[name][set] = tools.map((t) => ({ name: t.name, taskSupport: t.execution?.taskSupport ?? "" }));
      await client.close();
    }
  }
  return { servers };
}

// text joins a result's text blocks.
function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function gateway() {
  const elicitations = [];
  const client = new Client(info, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push({
      message: req.params.message,
      properties: Object.keys(req.params.requestedSchema?.properties ?? {}).sort(),
    });
    return { action: "accept", content: config.elicitAnswer };
  });
  const transport = config.url ? new StreamableHTTPClientTransport(new URL(config.url)) : stdio(config.stdio);
  await client.connect(transport);

  // Poll until every wanted tool is served; or, sooner, once each server
  // of CONFIG.prefixes has tools served (each listing arrives whole) and
  // the list has not changed for CONFIG.settleMs; or at CONFIG.waitMs.
  const deadline = Date.now() + config.waitMs;
  let served = [];
  let missing = config.want;
  let last = "";
  let stableSince = Date.now();
  for (;;) {
    served = (await listAll((p) => client.listTools(p))).map((t) => t.name);
    const have = new Set(served);
    missing = config.want.filter((n) => !have.has(n));
    const key = served.join("\n");
    if (key !== last) {
      last = key;
      stableSince = Date.now();
    }
    const connected = config.prefixes.every((p) => served.some((n) => n.startsWith(p)));
    if (missing.length === 0 || Date.now() > deadline || (connected && Date.now() - stableSince >= config.settleMs)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const prompts = client.getServerCapabilities()?.prompts ? (await listAll((p) => client.listPrompts(p))).map((p) => p.name) : [];

  const calls = {};
  for (const { label, name, args } of config.calls) {
    try {
      const result = await client.callTool({ name, arguments: args });
      calls[label] = { isError: result.isError === true, text: text(result) };
    } catch (err) {
      calls[label] = { protocolError: String(err?.message ?? err) };
    }
  }
  await client.close();
  return { served, prompts, missing, calls, elicitations };
}

const report = config.mode === "direct" ? await direct() : await gateway();
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
