"""A foreign MCP client of `hermesctl mcp serve`: the official `mcp` SDK launches it over stdio
and calls its tools the way Claude Code or another agent would.

Usage:
  python3 mcp_serve_client.py full HERMESCTL SOCKET SESSION_ID CWD
      list the tools and conversations, send to SESSION_ID, read it back, search, start a new
      conversation, and try an unknown session, an oversized message and an unknown tool
  python3 mcp_serve_client.py down HERMESCTL SOCKET
      list the tools, then list conversations and search, with no daemon running on SOCKET: the
      first call starts one, or fails as a tool error where none can start (the server lives)

Prints one JSON document of what the server answered; exits 3 when the `mcp` SDK is missing.
"""

import asyncio
import json
import os
import sys

try:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
except ImportError as e:  # the test turns this into a failure naming the fix
    print(f"the official mcp SDK is missing: {e}", file=sys.stderr)
    sys.exit(3)


async def call(session, name, arguments):
    """A tool call as {is_error, body}: body is the text parsed as JSON (or the raw text)."""
    result = await session.call_tool(name, arguments)
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    try:
        body = json.loads(text)
    except ValueError:
        body = text
    return {"is_error": bool(result.is_error), "body": body}


def server(hermesctl, socket, cwd=None):
    env = {"HERMES_HOME": os.environ.get("HERMES_HOME", ""), "HOME": os.environ.get("HOME", "")}
    return StdioServerParameters(
        command=hermesctl,
        args=["--socket", socket, "mcp", "serve"],
        env=env,
        cwd=cwd,
    )


async def full(hermesctl, socket, session_id, cwd):
    report = {}
    async with stdio_client(server(hermesctl, socket, cwd)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["server"] = {"name": init.server_info.name, "version": init.server_info.version}
            tools = (await session.list_tools()).tools
            report["tools"] = {
                t.name: {
                    "required": t.input_schema.get("required", []),
                    "properties": sorted(t.input_schema.get("properties", {})),
                    "read_only": bool(t.annotations and t.annotations.read_only_hint),
                }
                for t in tools
            }
            report["listed"] = await call(session, "conversations_list", {"limit": 10})
            report["filtered"] = await call(
                session, "conversations_list", {"search": "RELEASE", "platform": "cli"}
            )
            report["sent"] = await call(
                session,
                "conversation_send",
                {"session_key": session_id, "message": "When do we ship the zephyr release?"},
            )
            report["read"] = await call(
                session, "messages_read", {"session_key": session_id, "limit": 2}
            )
            report["read_last"] = await call(
                session, "messages_read", {"session_key": session_id, "limit": "1"}
            )
            report["got"] = await call(session, "conversation_get", {"session_key": session_id})
            report["search"] = await call(session, "messages_search", {"query": "zephyr"})
            report["new"] = await call(session, "conversation_send", {"message": "Start afresh"})
            new_key = report["new"]["body"].get("session_key", "") if isinstance(
                report["new"]["body"], dict
            ) else ""
            report["new_got"] = await call(session, "conversation_get", {"session_key": new_key})
            report["unknown_read"] = await call(
                session, "messages_read", {"session_key": "no-such-session"}
            )
            report["unknown_send"] = await call(
                session, "conversation_send", {"session_key": "no-such-session", "message": "hi"}
            )
            report["missing_arg"] = await call(session, "conversation_get", {})
            report["oversized"] = await call(
                session,
                "conversation_send",
                {"session_key": session_id, "message": "a" * 1_000_001},
            )
            try:
                await session.call_tool("no_such_tool", {})
                report["unknown_tool"] = "no error"
            except MCPError as e:
                report["unknown_tool"] = e.message
            # Still serving after all of that.
            report["after"] = await call(session, "conversations_list", {})
    return report


async def down(hermesctl, socket):
    report = {}
    async with stdio_client(server(hermesctl, socket)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            report["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            report["first"] = await call(session, "conversations_list", {})
            report["second"] = await call(session, "messages_search", {"query": "x"})
    return report


def main():
    mode = sys.argv[1]
    if mode == "full":
        report = asyncio.run(full(*sys.argv[2:6]))
    else:
        report = asyncio.run(down(*sys.argv[2:4]))
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
