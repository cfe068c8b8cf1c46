//! Running a command provider's line (`stt.providers.<name>.command`, `tts.providers.<name>.command`,
//! `HERMES_LOCAL_STT_COMMAND`) without ever putting a value into shell text: the line is the
//! user's own, and each `{placeholder}` becomes a reference to a positional parameter (`"${1}"`,
//! quoted for where it stands, as Hermes quotes its values), so `sh -c` gets the line and the
//! values apart. A path the model chose, or anything else, cannot become shell syntax. The
//! command runs in its own process group with a timeout that ends the whole group
//! (`exec::run_program`).

use std::{ffi::OsString, path::PathBuf, time::Duration};

use tokio_util::sync::CancellationToken;

use crate::exec::{self, ProgramEnd, ProgramRequest};

/// Bytes kept of a command's stdout and stderr.
const MAX_OUTPUT: usize = 64 * 1024;

/// The shell quote in force just before `position` of `line` (Hermes' rules).
fn quote_at(line: &[char], position: usize) -> Option<char> {
    let (mut quote, mut escaped, mut i) = (None, false, 0);
    while i < position {
        let c = line[i];
        match quote {
            Some('\'') if c == '\'' => quote = None,
            Some('\'') => {}
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(_) if c == '"' => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '\\' => i += 1,
            None => {}
        }
        i += 1;
    }
    quote
}

/// `line` with each `{name}` (or `{{name}}`) of `names` replaced by a reference to positional
/// parameter `index + 1`, quoted for its place; other `{{` / `}}` become single braces.
pub fn render(line: &str, names: &[&str]) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..].iter().collect();
        let after_dollar = i > 0 && chars[i - 1] == '$';
        let found = (!after_dollar)
            .then(|| {
                names.iter().enumerate().find_map(|(n, name)| {
                    let double = format!("{{{{{name}}}}}");
                    let single = format!("{{{name}}}");
                    if rest.starts_with(&double) {
                        Some((n, double.chars().count()))
                    } else if rest.starts_with(&single) {
                        Some((n, single.chars().count()))
                    } else {
                        None
                    }
                })
            })
            .flatten();
        if let Some((n, len)) = found {
            let reference = format!("${{{}}}", n + 1);
            match quote_at(&chars, i) {
                Some('\'') => out.push_str(&format!("'\"{reference}\"'")),
                Some(_) => out.push_str(&reference),
                None => out.push_str(&format!("\"{reference}\"")),
            }
            i += len;
        } else if rest.starts_with("{{") || rest.starts_with("}}") {
            out.push(chars[i]);
            i += 2;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// A finished command's output.
#[derive(Debug)]
pub struct Ran {
    pub stdout: String,
}

/// Run `line` with `values` for its placeholders `names`; `Err` says how it failed, naming
/// `what` (`TTS provider 'espeak'`).
pub async fn run(
    what: &str,
    line: &str,
    names: &[&str],
    values: &[String],
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    timeout: Duration,
) -> Result<Ran, String> {
    let script = render(line, names);
    let mut args: Vec<OsString> = vec!["-c".into(), script.into(), "hermes-voice".into()];
    args.extend(values.iter().map(OsString::from));
    let request = ProgramRequest {
        program: PathBuf::from("/bin/sh"),
        args,
        cwd,
        env,
        timeout,
        max_output_bytes: MAX_OUTPUT,
    };
    let ran = exec::run_program(request, CancellationToken::new()).await;
    let detail = || {
        let mut parts = Vec::new();
        if !ran.stderr.trim().is_empty() {
            parts.push(format!("stderr: {}", ran.stderr.trim()));
        }
        if !ran.stdout.trim().is_empty() {
            parts.push(format!("stdout: {}", ran.stdout.trim()));
        }
        if parts.is_empty() {
            "no command output".to_string()
        } else {
            parts.join("; ")
        }
    };
    match &ran.end {
        ProgramEnd::Exited(0) => Ok(Ran {
            stdout: ran.stdout.clone(),
        }),
        ProgramEnd::Exited(code) => Err(format!("{what} exited with code {code}: {}", detail())),
        ProgramEnd::TimedOut => Err(format!(
            "{what} timed out after {}s; the command was stopped",
            timeout.as_secs_f64()
        )),
        ProgramEnd::Interrupted => Err(format!("{what} was interrupted")),
        ProgramEnd::SpawnFailed(why) => Err(format!("{what} could not start: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_quoted_parameters() {
        let names = ["input_path", "output_path", "voice"];
        assert_eq!(
            render("tts -f {input_path} -w {{output_path}} ${voice}", &names),
            "tts -f \"${1}\" -w \"${2}\" ${voice}"
        );
        assert_eq!(
            render("x '{voice}' \"a {voice}\" {{json}}", &names),
            "x ''\"${3}\"'' \"a ${3}\" {json}"
        );
    }

    #[tokio::test]
    async fn values_never_become_shell_syntax() {
        let dir = tempfile::tempdir().unwrap();
        let evil = format!(
            "$(touch {0}/pwned); `touch {0}/pwned2`'\"",
            dir.path().display()
        );
        let env = vec![("PATH".into(), "/usr/bin:/bin".into())];
        for line in [
            "printf %s {voice}",
            "printf %s '{voice}'",
            "printf %s \"{voice}\"",
        ] {
            let ran = run(
                "test",
                line,
                &["voice"],
                std::slice::from_ref(&evil),
                env.clone(),
                dir.path().to_path_buf(),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
            assert_eq!(ran.stdout, evil, "{line}");
        }
        assert!(!dir.path().join("pwned").exists());
        assert!(!dir.path().join("pwned2").exists());
    }

    #[tokio::test]
    async fn failures_and_hangs_are_clear() {
        let env = vec![("PATH".into(), "/usr/bin:/bin".into())];
        let cwd = std::env::temp_dir();
        let failed = run(
            "TTS provider 'x'",
            "echo nope >&2; exit 3",
            &[],
            &[],
            env.clone(),
            cwd.clone(),
            Duration::from_secs(10),
        )
        .await
        .unwrap_err();
        assert_eq!(failed, "TTS provider 'x' exited with code 3: stderr: nope");
        let started = std::time::Instant::now();
        let hung = run(
            "TTS provider 'x'",
            "sleep 30",
            &[],
            &[],
            env,
            cwd,
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
        assert!(hung.contains("timed out after 0.3s"), "{hung}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
