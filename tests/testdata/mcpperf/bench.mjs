// The client of TestMCPImportedCallCost, written with the official
// TypeScript SDK (@modelcontextprotocol/sdk): one client calls a tool of a
// server directly and the same tool imported into dsh serve, alternating
// call by call so that the machine's noise falls on both, and reports the
// figures as one JSON object on standard output.
//
//   node bench.mjs CONFIG.json
//
// CONFIG: {sdk, direct: {command, args}, gateway: {command, args},
// tool, served, args, warmup, calls}. The gateway's tools arrive in the
// background (dsh connects its imports after initialize): tools/list is
// polled until `served` is listed. Output: {direct: [µs...], gateway:
// [µs...], initializeMs}, the call latencies in microseconds in the order
// made, and the time from spawning dsh serve to its initialize answer.
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

const info = { name: "dsh-perf", version: "1.0.0" };

async function connect({ command, args }) {
  const client = new Client(info, { capabilities: {} });
  const t0 = process.hrtime.bigint();
  await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
  return { client, initializeMs: Number(process.hrtime.bigint() - t0) / 1e6 };
}

async function call(client, name) {
  const t0 = process.hrtime.bigint();
  const r = await client.callTool({ name, arguments: config.args });
  const us = Number(process.hrtime.bigint() - t0) / 1e3;
  if (r.isError) {
    throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  }
  return us;
}

const direct = await connect(config.direct);
const gateway = await connect(config.gateway);
const deadline = Date.now() + 60_000;
for (;;) {
  const { tools } = await gateway.client.listTools();
  if (tools.some((t) => t.name === config.served)) break;
  if (Date.now() > deadline) throw new Error(`dsh serve did not list ${config.served} within 60 s`);
  await new Promise((r) => setTimeout(r, 50));
}
for (let i = 0; i < config.warmup; i++) {
  await call(direct.client, config.tool);
  await call(gateway.client, config.served);
}
const out = { direct: [], gateway: [], initializeMs: gateway.initializeMs };
for (let i = 0; i < config.calls; i++) {
  // Alternate which goes first, so that neither always follows the other.
  if (i % 2 === 0) {
    out.direct.push(await call(direct.client, config.tool));
    out.gateway.push(await call(gateway.client, config.served));
  } else {
    out.gateway.push(await call(gateway.client, config.served));
    out.direct.push(await call(direct.client, config.tool));
  }
}
await direct.client.close();
await gateway.client.close();
process.stdout.write(JSON.stringify(out) + "\n");
