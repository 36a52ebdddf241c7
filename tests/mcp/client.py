"""An MCP client built on the official Python SDK (`mcp`), driven by a JSON plan.

    python client.py [--elicit accept|decline|none] -- <server command> [args...] < plan.json

The plan on stdin is a JSON array of operations, run in order over one stdio session:

    [{"op": "list"}, {"op": "call", "name": "Read", "arguments": {"file_path": "/x"}}]

After `initialize`, one JSON document is printed on stdout:

    {"server": {"name": ..., "version": ...},
     "results": [<one per operation>],
     "elicitations": [<message of each elicitation/create request>]}   (only with --elicit accept|decline)

- list: {"tools": [{"name", "description", "inputSchema"}]}, every page followed.
- call: {"isError": bool, "text": <text content joined with "\n">, "structuredContent": <or null>},
  or {"error": <message>, "code": <JSON-RPC code, when there is one>} when the request failed:
  a JSON-RPC error from the server, a request that got no answer within 60 s, a closed
  connection, or the SDK refusing the result (structured content that does not match the
  tool's outputSchema).

--elicit accept|decline advertises the elicitation capability and answers every request with
that action (accept carries content {}); --elicit none (the default) advertises none, as a
client without a user to ask would.

The server runs with this process's whole environment (the SDK would otherwise pass only
HOME, PATH and a few more) and its stderr goes to ours. When the session cannot be set up,
{"error": <message>} is printed and the exit status is 1.
"""

import argparse
import json
import os
import sys

import anyio
import mcp.types as types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

# The TypeScript SDK's default; a request that hangs fails the plan instead of the test run.
TIMEOUT_SECONDS = 60


def parse_args(argv):
    if "--" not in argv:
        sys.exit("usage: client.py [--elicit accept|decline|none] -- <server command> [args...]")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="client.py")
    parser.add_argument("--elicit", choices=["accept", "decline", "none"], default="none")
    options = parser.parse_args(argv[:split])
    server = argv[split + 1 :]
    if not server:
        sys.exit("client.py: no server command after --")
    return options, server


def describe(tool):
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}


def call_result(result):
    text = "\n".join(block.text for block in result.content if block.type == "text")
    return {"isError": bool(result.is_error), "text": text, "structuredContent": result.structured_content}


async def run_op(session, op):
    kind = op.get("op")
    try:
        if kind == "list":
            tools = []
            cursor = None
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(describe(tool) for tool in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return {"tools": tools}
        if kind == "call":
            return call_result(await session.call_tool(op["name"], op.get("arguments")))
    except MCPError as e:
        return {"error": e.message, "code": e.code}
    except RuntimeError as e:
        return {"error": str(e)}
    raise SystemExit(f"client.py: unknown operation {op!r}")


async def main():
    options, server = parse_args(sys.argv[1:])
    plan = json.load(sys.stdin)
    elicitations = []

    async def answer(_context, params):
        elicitations.append(params.message)
        if options.elicit == "accept":
            return types.ElicitResult(action="accept", content={})
        return types.ElicitResult(action="decline")

    params = StdioServerParameters(command=server[0], args=server[1:], env=dict(os.environ))
    doc = {}
    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(
                read,
                write,
                read_timeout_seconds=TIMEOUT_SECONDS,
                elicitation_callback=None if options.elicit == "none" else answer,
            ) as session:
                init = await session.initialize()
                doc["server"] = {"name": init.server_info.name, "version": init.server_info.version}
                doc["results"] = [await run_op(session, op) for op in plan]
    except Exception as e:  # noqa: BLE001 - any failure to set up the session is reported the same way
        if "results" in doc:
            raise
        # anyio wraps a failure inside the transport's task group; the leaf says what went wrong.
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return 1
    if options.elicit != "none":
        doc["elicitations"] = elicitations
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
