//! Exfiltration rules: secrets sent over the network, credential stores read, environment
//! dumps, DNS and staging tricks, Markdown-URL and prompt-level exfiltration.

use super::Severity::{Critical, High, Medium};
use super::checks;
use super::exfil_checks;
use super::rules::{EXFILTRATION as X, Rule, checked, home, rule};

/// Secret-shaped variable names (the check confirms with `is_secret_name`).
macro_rules! secret_var {
    () => {
        r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_PAT\b)"
    };
}
/// Secret-shaped words anywhere (code: identifiers, dict keys).
macro_rules! secret_word {
    () => {
        r"(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)"
    };
}
/// Programs and calls that talk to the network.
macro_rules! network_tool {
    () => {
        r"\b(?:curl|wget|nc|ncat|netcat|socat|telnet|scp|sftp|ftp)\b|/dev/(?:tcp|udp)/|\b(?:requests|httpx)\.(?:post|put|patch|get)\b|\bfetch\s*\(|\burlopen\b"
    };
}

pub(super) static RULES: &[Rule] = &[
    checked(
        "env_exfil_curl",
        Critical,
        X,
        concat!(r"\bcurl\b[^\n]*", secret_var!()),
        "curl sends a secret environment variable to a foreign host",
        checks::shell_secret_leaves,
    ),
    checked(
        "env_exfil_wget",
        Critical,
        X,
        concat!(r"\bwget\b[^\n]*", secret_var!()),
        "wget sends a secret environment variable to a foreign host",
        checks::shell_secret_leaves,
    ),
    checked(
        "env_exfil_fetch",
        Critical,
        X,
        concat!(r"\bfetch\s*\([^\n]*", secret_word!()),
        "fetch() sends a secret to a foreign host",
        checks::code_secret_leaves,
    ),
    checked(
        "env_exfil_httpx",
        Critical,
        X,
        concat!(
            r"\bhttpx?\.(?:get|post|put|patch|request)\s*\([^\n]*",
            secret_word!()
        ),
        "HTTP client call sends a secret to a foreign host",
        checks::code_secret_leaves,
    ),
    checked(
        "env_exfil_requests",
        Critical,
        X,
        concat!(
            r"\brequests\.(?:get|post|put|patch|request)\s*\([^\n]*",
            secret_word!()
        ),
        "requests call sends a secret to a foreign host",
        checks::code_secret_leaves,
    ),
    checked(
        "secret_in_request",
        Medium,
        X,
        concat!(
            r"(?:\b(?:curl|wget)\b[^\n]*",
            secret_var!(),
            r"|(?:\bfetch\s*\(|\bhttpx?\.(?:get|post|put|patch|request)\s*\(|\brequests\.(?:get|post|put|patch|request)\s*\()[^\n]*",
            secret_word!(),
            ")"
        ),
        "sends a generically named secret in a request (check where it goes)",
        checks::generic_secret_sent,
    ),
    checked(
        "env_exfil_socket",
        Critical,
        X,
        concat!(
            r"(?:\b(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/)[^\n]*",
            secret_var!(),
            "|",
            secret_var!(),
            r"[^\n]*(?:\b(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/)"
        ),
        "sends a secret environment variable over a raw socket",
        checks::secret_on_socket,
    ),
    checked(
        "secret_file_exfil",
        Critical,
        X,
        network_tool!(),
        "sends a credential file over the network",
        checks::secret_file_to_network,
    ),
    checked(
        "env_dump_exfil",
        Critical,
        X,
        network_tool!(),
        "sends the whole environment over the network",
        checks::env_dump_to_network,
    ),
    rule(
        "encoded_exfil",
        High,
        X,
        r#"(?:\bprintenv\b|\benv\b|\benviron\b|process\.env)[^\n]*\|\s*base64(?:\s+-w\s*0|\s+--wrap=0)?\s*(?:$|[|;&)>"'`])|\bb64encode\s*\([^\n]*(?:\benviron\b|process\.env)|\b(?:btoa|Buffer\.from)\s*\([^\n]*process\.env"#,
        "base64-encodes the environment",
    ),
    checked(
        "ssh_dir_access",
        High,
        X,
        home!("ssh"),
        "references private SSH keys (~/.ssh)",
        exfil_checks::ssh_private,
    ),
    checked(
        "aws_dir_access",
        High,
        X,
        home!("aws"),
        "references AWS credentials (~/.aws)",
        exfil_checks::aws_private,
    ),
    rule(
        "gpg_dir_access",
        High,
        X,
        home!("gnupg"),
        "references the GPG keyring (~/.gnupg)",
    ),
    rule(
        "kube_dir_access",
        Medium,
        X,
        home!("kube"),
        "references Kubernetes config (~/.kube)",
    ),
    rule(
        "docker_dir_access",
        Medium,
        X,
        home!("docker"),
        "references Docker config (~/.docker, may hold registry logins)",
    ),
    rule(
        "hermes_env_access",
        Critical,
        X,
        r"(?:\.hermes|\bHERMES_HOME(?::-[^}\s]*)?)\}?[/\\](?:\.env|auth\.json)\b",
        "references the Hermes secrets file (~/.hermes/.env)",
    ),
    checked(
        "read_secrets_file",
        Critical,
        X,
        r#"\b(?:cat|tac|bat|batcat|xxd|od|base64)\s+(?:[^>|;&\n]*?[\s/"'=])?(?:\.env(?:\.(?:local|prod|production|dev|development|staging|test))?|credentials(?:\.json)?|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.vault-token|id_(?:rsa|dsa|ecdsa|ed25519))(?:$|[\s"';|&)<>`])"#,
        "reads a secrets file (.env, credentials, .netrc, private key)",
        exfil_checks::not_env_export,
    ),
    checked(
        "dump_all_env",
        High,
        X,
        r"\bprintenv\b|(?:^|[;&|(`]|\$\()\s*(?:sudo\s+)?env\s*(?:\||>|\)|$)",
        "dumps all environment variables",
        checks::dumps_environment,
    ),
    checked(
        "python_os_environ",
        High,
        X,
        r"\bos\.environ\b",
        "reads all of os.environ (environment dump)",
        exfil_checks::python_environ_dump,
    ),
    rule(
        "python_environ_get_secret",
        Medium,
        X,
        concat!(
            r#"\bos\.environ\s*(?:\.get\s*\(|\[)\s*["'][^"']*"#,
            secret_word!()
        ),
        "reads a secret from os.environ",
    ),
    rule(
        "python_getenv_secret",
        Medium,
        X,
        concat!(r"\bos\.getenv\s*\([^)]*", secret_word!()),
        "reads a secret via os.getenv()",
    ),
    checked(
        "node_process_env",
        High,
        X,
        r"\bprocess\.env\b",
        "reads all of process.env (environment dump)",
        exfil_checks::node_env_dump,
    ),
    rule(
        "ruby_env_secret",
        Medium,
        X,
        r"(?-i:\bENV)\[[^\n]*(?:KEY|TOKEN|SECRET|PASSWORD)",
        "reads a secret via Ruby ENV[]",
    ),
    checked(
        "dns_exfil",
        Critical,
        X,
        r"(?:^|[;&|(`]|\$\(|\bsudo\s)\s*(?:dig|nslookup|host|drill|ping)\b[^\n]*\$|\bgethostbyname\w*\s*\([^\n]*\{",
        "DNS lookup of a name built from data (DNS exfiltration)",
        exfil_checks::dns_label_from_data,
    ),
    rule(
        "tmp_staging",
        Critical,
        X,
        r">\s*/tmp/\S*\s*&&\s*(?:curl|wget|nc|python)",
        "writes to /tmp then sends it off",
    ),
    rule(
        "md_image_exfil",
        High,
        X,
        r"!\[[^\]]*\]\(\s*https?://[^)\s]*(?:\$\{?\w|\{\{)",
        "Markdown image URL built from variables (image-based exfiltration)",
    ),
    rule(
        "md_link_exfil",
        High,
        X,
        r"\[[^\]]*\]\(\s*https?://[^)\s]*(?:\$\{?\w|\{\{)",
        "Markdown link URL built from variables",
    ),
    rule(
        "context_exfil",
        High,
        X,
        r"\b(?:include|output|print|send|share|dump|leak|upload|post|reveal|forward|paste)\s+(?:\w+\s+){0,4}?(?:(?:the|this|your|our|all)\s+)?(?:(?:entire|full|whole|complete)\s+(?:conversation|chat)|(?:conversation|chat|message)\s+(?:history|log|transcript)|previous\s+messages|context\s+window|session\s+transcript)\b",
        "tells the agent to hand over the conversation",
    ),
    checked(
        "send_to_url",
        High,
        X,
        r"\b(?:send|post|upload|transmit|forward|exfiltrate|leak|beacon)\s+[^\n]*?\b(?:to|at|into)\s+<?https?://",
        "tells the agent to send sensitive data to a URL",
        exfil_checks::sends_sensitive,
    ),
];
