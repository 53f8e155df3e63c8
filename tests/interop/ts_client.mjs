// The TypeScript MCP SDK 1.x as a stdio client of a server: what does a third-party client see?
//
//   node ts_client.mjs PLAN.json COMMAND [ARGS...]
//
// Needs MCP_TS_SDK_HOME: a directory whose node_modules holds @modelcontextprotocol/sdk (1.x).
// PLAN.json: {"get": {"name", "arguments"}, "complete": {"prompt", "argument", "value", "context"?},
//             "errors": [{"label", "name", "arguments"}]}
// Prints one JSON report on stdout: the negotiated protocol version, server info and capabilities, every page of
// prompts/list (cursors followed to the end), the prompts/get and completion/complete results, and the JSON-RPC
// error (code, message, data) each failing request of `errors` got.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";

const sdkHome = process.env.MCP_TS_SDK_HOME;
if (!sdkHome) throw new Error("set MCP_TS_SDK_HOME to the directory that holds node_modules/@modelcontextprotocol/sdk");
// The SDK lives outside this script's tree, so resolve it from its own home (ESM ignores NODE_PATH).
const require = createRequire(resolve(sdkHome, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
// The package's exports map hides its package.json, so read it from disk.
const sdkManifest = resolve(sdkHome, "node_modules/@modelcontextprotocol/sdk/package.json");
const sdkVersion = JSON.parse(readFileSync(sdkManifest, "utf8")).version;

const [planPath, command, ...args] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, "utf8"));

const transport = new StdioClientTransport({ command, args, stderr: "ignore", env: { ...process.env } });
let protocolVersion = null;
// On stdio this hook is the only place the negotiated version shows up.
transport.setProtocolVersion = (version) => {
  protocolVersion = version;
};
const client = new Client({ name: "mcp-notebook-interop", version: "0.0.1" });
await client.connect(transport);

const report = {
  sdkVersion,
  protocolVersion,
  serverVersion: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  pages: [],
  prompts: [],
  errors: {},
};
try {
  let cursor;
  do {
    const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
    report.pages.push(page.prompts.map((p) => p.name));
    report.prompts.push(...page.prompts);
    cursor = page.nextCursor;
    if (report.pages.length > 100) throw new Error("prompts/list does not end: more than 100 pages");
  } while (cursor !== undefined);

  report.get = await client.getPrompt({ name: plan.get.name, arguments: plan.get.arguments });
  const { prompt, argument, value, context } = plan.complete;
  report.complete = await client.complete({
    ref: { type: "ref/prompt", name: prompt },
    argument: { name: argument, value },
    ...(context ? { context: { arguments: context } } : {}),
  });
  for (const { label, name, arguments: promptArgs } of plan.errors) {
    try {
      const result = await client.getPrompt({ name, arguments: promptArgs });
      report.errors[label] = { unexpectedResult: result };
    } catch (error) {
      report.errors[label] = { code: error.code, message: error.message, data: error.data ?? null };
    }
  }
} finally {
  await client.close();
}
console.log(JSON.stringify(report));
