"""A small MCP server over stdio for hermesd's MCP client tests (tests/tests/mcp_client.rs) and
bench-mcp, written with the official `mcp` Python SDK (its MCPServer, FastMCP's successor).

Tools:
  echo(message)  answers `Echo: <message>` at once (bench-mcp's trivial call), writing
                 `echo <message>` to the signal file.
  grow()         registers the tool `added` and sends `notifications/tools/list_changed`.
  hang()         never answers: it writes `hang started` to the signal file, then sleeps until
                 cancelled (a `notifications/cancelled` from the client, or the client gone),
                 when it writes `hang cancelled`.
  added()        only after `grow`: answers `added answers`.

    mcp_changing_server.py [SIGNAL_FILE]

SIGNAL_FILE (optional) is a file or FIFO the test reads: each event is one line, appended and
flushed at once.
"""

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing")
signal_path = sys.argv[1] if len(sys.argv) > 1 else None


def signal(line: str) -> None:
    if signal_path is None:
        return
    with open(signal_path, "a", encoding="utf-8") as out:
        out.write(line + "\n")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    signal(f"echo {message}")
    return f"Echo: {message}"


def added() -> str:
    """A tool that exists only after `grow` was called."""
    return "added answers"


@server.tool()
async def grow(ctx: Context) -> str:
    """Register the tool `added` and tell the client the tool list changed."""
    server.add_tool(added, name="added")
    await ctx.session.send_tool_list_changed()
    return "grown: the tool `added` is registered"


@server.tool()
async def hang() -> str:
    """Never answer until cancelled."""
    signal("hang started")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            signal("hang cancelled")
        raise
    return "unreachable"


if __name__ == "__main__":
    server.run("stdio")
