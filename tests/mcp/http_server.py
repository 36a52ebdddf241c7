"""An MCP server over HTTP built on the official Python SDK (`mcp`, whose FastMCP is called
MCPServer since 2.0), for exercising an MCP client against a real peer.

    python http_server.py --port 0 [--transport streamable-http|sse]

Serves on 127.0.0.1 and prints exactly one line on stdout, `PORT <n>`, once it accepts
connections; everything else (SDK and uvicorn logs) goes to stderr. Endpoints:

    streamable-http (default)   http://127.0.0.1:<n>/mcp
    sse                         http://127.0.0.1:<n>/sse   (messages are POSTed to /messages/)

Tools:
    add(a: int, b: int) -> int     the sum (also as structured content {"result": n})
    echo(text: str) -> str         the text back
    fail()                         a tool error: isError true, text ending "fail always fails"
    slow(seconds: float) -> str    sleeps, then answers "slept <seconds>"
    grow() -> str                  registers the tool `late` (answers "late") and sends
                                   notifications/tools/list_changed
"""

import argparse
import socket
import sys

import anyio
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build() -> MCPServer:
    server = MCPServer("mcp-http-test-server", version="1.0.0", log_level="WARNING")

    # MCPServer advertises tools.listChanged only when asked to; a client may rightly ignore a
    # list_changed notification from a server that did not advertise it.
    lowlevel = server._lowlevel_server
    plain_options = lowlevel.create_initialization_options
    lowlevel.create_initialization_options = lambda *args, **kwargs: plain_options(
        NotificationOptions(tools_changed=True), *args[1:], **kwargs
    )

    @server.tool(description="Adds two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Returns the text it was given.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Always fails, as a tool error.")
    def fail() -> str:
        raise ToolError("fail always fails")

    @server.tool(description="Sleeps for the given number of seconds, then answers.")
    async def slow(seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    def late() -> str:
        return "late"

    @server.tool(description="Adds the tool `late` and tells the client its tool list changed.")
    async def grow(ctx: Context) -> str:
        if server._tool_manager.get_tool("late") is None:
            server.add_tool(late, name="late", description="Exists only after grow was called.")
        # Handshake-era sessions hear it as a notification on the session; 2026-era clients
        # that opened subscriptions/listen hear it through the subscription bus.
        await ctx.session.send_tool_list_changed()
        await ctx.notify_tools_changed()
        return "grew"

    return server


async def serve(app, sock: socket.socket, port: int, stdout) -> None:
    config = uvicorn.Config(app, log_config=None, access_log=False, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve, [sock])
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.01)
        stdout.write(f"PORT {port}\n")
        stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(prog="http_server.py")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--transport", choices=["streamable-http", "sse"], default="streamable-http")
    args = parser.parse_args()

    # Only the PORT line may reach stdout: whoever started the server reads it to connect.
    stdout = sys.stdout
    sys.stdout = sys.stderr

    # Bound here so port 0 yields the real port before the server runs, with no window in
    # which another process could take it.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]

    server = build()
    if args.transport == "sse":
        app = server.sse_app(host="127.0.0.1")
    else:
        app = server.streamable_http_app(host="127.0.0.1")
    anyio.run(serve, app, sock, port, stdout)


if __name__ == "__main__":
    main()
