//! The `hermes_tools` Python module a script imports: one function per tool the script may call
//! (Hermes' names and signatures, so scripts written for Hermes run unchanged), each a request
//! over the private socket, and three helpers (`json_parse`, `shell_quote`, `retry`).

/// Tools a script may call, in the order their functions are written.
pub const SCRIPT_TOOLS: [&str; 7] = [
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "terminal",
    "web_search",
    "web_extract",
];

/// One function: the tool, its Python parameters, and its one-line docstring.
struct Stub {
    tool: &'static str,
    params: &'static str,
    doc: &'static str,
}

const STUBS: [Stub; 7] = [
    Stub {
        tool: "read_file",
        params: "path, offset=1, limit=500",
        doc: "Lines of a text file (1-indexed): {content, total_lines, ...}.",
    },
    Stub {
        tool: "write_file",
        params: "path, content",
        doc: "Write (replace) a whole file.",
    },
    Stub {
        tool: "search_files",
        params: "pattern, target=\"content\", path=\".\", file_glob=None, limit=50, offset=0, \
                 output_mode=\"content\", context=0",
        doc: "Search file contents (target=\"content\") or names (target=\"files\"): {matches}.",
    },
    Stub {
        tool: "patch",
        params: "path=None, old_string=None, new_string=None, replace_all=False, \
                 mode=\"replace\", patch=None",
        doc: "Replace old_string with new_string in path, or apply a V4A patch (mode=\"patch\").",
    },
    Stub {
        tool: "terminal",
        params: "command, timeout=None, workdir=None",
        doc: "Run a shell command in the foreground: {output, exit_code}.",
    },
    Stub {
        tool: "web_search",
        params: "query, limit=5",
        doc: "Search the web.",
    },
    Stub {
        tool: "web_extract",
        params: "urls, char_limit=None",
        doc: "Pages as Markdown: {results: [{url, title, content, error}]}.",
    },
];

/// The transport and helpers every module starts with. The daemon answers each request line
/// with one JSON line: the tool's result as the model would see it.
const HEADER: &str = r#""""Tools of the hermesd session that runs this script (generated per run)."""
import json as _json
import os as _os
import shlex as _shlex
import socket as _socket
import threading as _threading
import time as _time

_lock = _threading.Lock()
_conn = None
_reader = None


def _request(tool, args):
    global _conn, _reader
    line = _json.dumps({
        "tool": tool,
        "args": {k: v for k, v in args.items() if v is not None},
        "token": _os.environ.get("HERMES_RPC_TOKEN", ""),
    }) + "\n"
    with _lock:
        if _conn is None:
            _conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            _conn.connect(_os.environ["HERMES_RPC_SOCKET"])
            _reader = _conn.makefile("rb")
        _conn.sendall(line.encode("utf-8"))
        answer = _reader.readline()
    if not answer:
        raise RuntimeError("hermesd closed the tool channel")
    result = _json.loads(answer)
    if isinstance(result, str):
        try:
            return _json.loads(result)
        except ValueError:
            return result
    return result


def json_parse(text):
    """json.loads that accepts control characters inside strings (terminal output)."""
    return _json.loads(text, strict=False)


def shell_quote(s):
    """Quote s for a shell command line."""
    return _shlex.quote(s)


def retry(fn, max_attempts=3, delay=2):
    """Call fn until it returns without raising, waiting delay, 2*delay, ... between tries."""
    for attempt in range(max_attempts):
        try:
            return fn()
        except Exception:
            if attempt == max_attempts - 1:
                raise
            _time.sleep(delay * (2 ** attempt))

"#;

/// The module's source with a function for each of `tools` (names outside [`SCRIPT_TOOLS`]
/// are ignored).
pub fn module(tools: &[&str]) -> String {
    let mut source = String::from(HEADER);
    for stub in STUBS.iter().filter(|s| tools.contains(&s.tool)) {
        let names: Vec<&str> = stub
            .params
            .split(", ")
            .map(|p| p.split('=').next().unwrap_or(p).trim())
            .collect();
        let args = names
            .iter()
            .map(|n| format!("{n:?}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        source.push_str(&format!(
            "\ndef {name}({params}):\n    \"\"\"{doc}\"\"\"\n    return _request({name:?}, {{{args}}})\n\n",
            name = stub.tool,
            params = stub.params,
            doc = stub.doc,
        ));
    }
    source
}

/// The functions as the tool's description lists them: names and first arguments.
pub fn signatures() -> String {
    STUBS
        .iter()
        .map(|s| {
            let required: Vec<&str> = s.params.split(", ").filter(|p| !p.contains('=')).collect();
            format!("{}({})", s.tool, required.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_given_tools_get_functions() {
        let source = super::module(&["read_file", "terminal", "memory"]);
        assert!(source.contains("\ndef read_file(path, offset=1, limit=500):"));
        assert!(source.contains(
            r#"return _request("read_file", {"path": path, "offset": offset, "limit": limit})"#
        ));
        assert!(source.contains("\ndef terminal("));
        assert!(!source.contains("def write_file"));
        assert!(!source.contains("def memory"));
        assert!(source.contains("def json_parse("));
    }
}
