//! Configuration errors: each names the file and, where known, the line and the key.

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}{}: {message}", location(*.line, *.column))]
    Syntax {
        path: String,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    #[error("{path}{}: `{key}`: {message}", location(*.line, None))]
    Value {
        path: String,
        key: String,
        line: Option<usize>,
        message: String,
    },
    #[error("invalid --set `{0}`: expected KEY=VALUE with a dotted key")]
    Flag(String),
    #[error("{0}")]
    Env(#[from] hermes_proto::env::DotenvError),
    #[error("built-in defaults do not parse: {0}")]
    Defaults(String),
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" line {l} column {c}"),
        (Some(l), None) => format!(" line {l}"),
        _ => String::new(),
    }
}
