// An MCP client built on the official TypeScript SDK (@modelcontextprotocol/sdk), driven by a
// JSON plan. Same command line, plan and output as client.py:
//
//     MCP_NODE_PEERS=<dir> node client.mjs [--elicit accept|decline|none] -- <server command> [args...] < plan.json
//
// MCP_NODE_PEERS names the directory whose node_modules holds the SDK (the tests' node_peers()
// directory); without it the current directory is used. ES modules ignore NODE_PATH, so the
// SDK is resolved from that directory explicitly.
//
// The plan on stdin is a JSON array of operations, run in order over one stdio session:
//
//     [{"op": "list"}, {"op": "call", "name": "Read", "arguments": {"file_path": "/x"}}]
//
// After `initialize`, one JSON document is printed on stdout:
//
//     {"server": {"name": ..., "version": ...},
//      "results": [<one per operation>],
//      "elicitations": [<message of each elicitation/create request>]}   (only with --elicit accept|decline)
//
// - list: {"tools": [{"name", "description", "inputSchema"}]}, every page followed.
// - call: {"isError": bool, "text": <text content joined with "\n">, "structuredContent": <or null>},
//   or {"error": <message>, "code": <JSON-RPC code, when there is one>} when the request failed:
//   a JSON-RPC error from the server, a request that got no answer within 60 s, a closed
//   connection, or the SDK refusing the result (structured content that does not match the
//   tool's outputSchema).
//
// --elicit accept|decline advertises the elicitation capability (form and URL modes, as the
// Python SDK does) and answers every request with that action (accept carries content {});
// --elicit none (the default) advertises none.
//
// The server runs with this process's whole environment (the SDK would otherwise pass only
// HOME, PATH and a few more) and its stderr goes to ours. When the session cannot be set up,
// {"error": <message>} is printed and the exit status is 1.

import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const USAGE = 'usage: client.mjs [--elicit accept|decline|none] -- <server command> [args...]';
const TIMEOUT_MS = 60_000;

function parseArgs(argv) {
  const split = argv.indexOf('--');
  if (split < 0) throw new Error(USAGE);
  const options = { elicit: 'none' };
  const own = argv.slice(0, split);
  for (let i = 0; i < own.length; i++) {
    if (own[i] === '--elicit' && ['accept', 'decline', 'none'].includes(own[i + 1])) {
      options.elicit = own[++i];
    } else {
      throw new Error(`${USAGE}\nunexpected argument ${JSON.stringify(own[i])}`);
    }
  }
  const server = argv.slice(split + 1);
  if (server.length === 0) throw new Error('client.mjs: no server command after --');
  return { options, server };
}

async function sdk(subpath) {
  const peers = process.env.MCP_NODE_PEERS || process.cwd();
  const require = createRequire(path.join(path.resolve(peers), 'package.json'));
  return import(pathToFileURL(require.resolve(`@modelcontextprotocol/sdk/${subpath}`)).href);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function callResult(result) {
  const text = (result.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  return { isError: Boolean(result.isError), text, structuredContent: result.structuredContent ?? null };
}

// McpError prefixes "MCP error <code>: " to the message; the bare message and the code are what
// client.py reports too.
function failure(e) {
  if (e instanceof Error && typeof e.code === 'number') {
    return { error: e.message.replace(/^MCP error -?\d+: /, ''), code: e.code };
  }
  return { error: e instanceof Error ? e.message : String(e) };
}

async function runOp(client, op) {
  try {
    if (op.op === 'list') {
      const tools = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: TIMEOUT_MS });
        for (const t of page.tools) {
          tools.push({ name: t.name, description: t.description ?? null, inputSchema: t.inputSchema });
        }
        cursor = page.nextCursor;
      } while (cursor);
      return { tools };
    }
    if (op.op === 'call') {
      const result = await client.callTool({ name: op.name, arguments: op.arguments }, undefined, {
        timeout: TIMEOUT_MS,
      });
      return callResult(result);
    }
  } catch (e) {
    return failure(e);
  }
  throw new Error(`client.mjs: unknown operation ${JSON.stringify(op)}`);
}

async function main() {
  const { options, server } = parseArgs(process.argv.slice(2));
  const plan = JSON.parse(await readStdin());
  const { Client } = await sdk('client/index.js');
  const { StdioClientTransport } = await sdk('client/stdio.js');
  const { ElicitRequestSchema } = await sdk('types.js');

  const elicitations = [];
  const capabilities = options.elicit === 'none' ? {} : { elicitation: { form: {}, url: {} } };
  const client = new Client({ name: 'mcp-typescript-client', version: '1.0.0' }, { capabilities });
  if (options.elicit !== 'none') {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params.message);
      return options.elicit === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
    });
  }

  const transport = new StdioClientTransport({
    command: server[0],
    args: server.slice(1),
    env: { ...process.env },
    stderr: 'inherit',
  });
  try {
    await client.connect(transport, { timeout: TIMEOUT_MS });
  } catch (e) {
    process.stdout.write(JSON.stringify(failure(e)) + '\n');
    await client.close().catch(() => {});
    return 1;
  }
  const info = client.getServerVersion();
  const doc = { server: { name: info?.name ?? null, version: info?.version ?? null }, results: [] };
  for (const op of plan) doc.results.push(await runOp(client, op));
  if (options.elicit !== 'none') doc.elicitations = elicitations;
  await client.close();
  process.stdout.write(JSON.stringify(doc) + '\n');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  },
);
