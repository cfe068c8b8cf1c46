//! A job's pre-run script, as Hermes runs it: a file under `$HERMES_HOME/scripts/` (the job
//! names it relatively; the real path, symlinks followed, must stay inside), run with bash for
//! `.sh`/`.bash` and Python otherwise, in its own directory, with the terminal's environment
//! (secrets stripped) and `cron.script_timeout_seconds`. Its output is masked for secrets, then
//! feeds the prompt (`## Script Output`), replaces the agent (`no_agent`), or stops the run
//! silently (empty output, or a last line `{"wakeAgent": false}`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::exec::{self, ProgramEnd, ProgramRequest};
use crate::tools::ToolServices;

/// Bytes kept of each of the script's stdout and stderr.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// How the script went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptOutcome {
    /// It exited 0: its stdout, trimmed and masked.
    Output(String),
    /// It could not run, exited non-zero or timed out: what to tell the user.
    Failed(String),
}

/// The script `relative` names, resolved under `home`'s `scripts/` directory, or why not.
pub fn resolve(home: &Path, relative: &str) -> Result<PathBuf, String> {
    let dir = home.join("scripts");
    let wanted = dir.join(relative);
    let Ok(real_dir) = std::fs::canonicalize(&dir) else {
        return Err(format!("Script not found: {}", wanted.display()));
    };
    let Ok(real) = std::fs::canonicalize(&wanted) else {
        return Err(format!("Script not found: {}", wanted.display()));
    };
    if !real.starts_with(&real_dir) {
        return Err(format!(
            "Blocked: script path resolves outside the scripts directory ({}): '{}'",
            real_dir.display(),
            relative
        ));
    }
    if !real.is_file() {
        return Err(format!("Script path is not a file: {}", real.display()));
    }
    Ok(real)
}

/// System directories, searched before `PATH` for Python: a `python3` in the user's home (a
/// shim, `~/.local/bin`) is a file the agent could have written.
const SYSTEM_BIN: &[&str] = &["/usr/bin", "/usr/local/bin", "/bin"];

/// The interpreter for `script`: bash for `.sh`/`.bash`, else the first `python3` (or
/// `python`) in the system directories, then on `path`.
fn interpreter(script: &Path, path: Option<&std::ffi::OsStr>) -> PathBuf {
    let ext = script.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext == "sh" || ext == "bash" {
        return exec::bash_path().to_path_buf();
    }
    let mut dirs: Vec<PathBuf> = SYSTEM_BIN.iter().map(PathBuf::from).collect();
    dirs.extend(
        path.map(|p| std::env::split_paths(p).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    ["python3", "python"]
        .iter()
        .find_map(|name| {
            dirs.iter()
                .map(|dir| dir.join(name))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("/usr/bin/python3"))
}

/// Run the job's script `relative` to its end, `timeout`, or `stop` (the daemon stopping).
pub async fn run(
    services: &ToolServices,
    relative: &str,
    timeout: Duration,
    stop: CancellationToken,
) -> ScriptOutcome {
    let login = services.login_env().await;
    let env = exec::child_env(&login, &[]);
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let (home, wanted) = (services.hermes_home.clone(), relative.to_string());
    // Both look at the file system: off the runtime's threads.
    let found = tokio::task::spawn_blocking(move || {
        resolve(&home, &wanted).map(|script| {
            let program = interpreter(&script, path.as_deref());
            (script, program)
        })
    })
    .await;
    let (script, program) = match found {
        Ok(Ok(found)) => found,
        Ok(Err(why)) => return ScriptOutcome::Failed(why),
        Err(e) => return ScriptOutcome::Failed(format!("cannot look up the script: {e}")),
    };
    let cwd = script
        .parent()
        .map_or_else(|| services.hermes_home.clone(), Path::to_path_buf);
    let python = program != exec::bash_path();
    // Python without the user's site-packages (`usercustomize` there would run in every job).
    let mut args: Vec<std::ffi::OsString> = if python {
        vec!["-s".into()]
    } else {
        Vec::new()
    };
    args.push(script.clone().into_os_string());
    let request = ProgramRequest {
        program,
        args,
        cwd,
        env,
        timeout,
        max_output_bytes: MAX_OUTPUT_BYTES,
    };
    let ran = exec::run_program(request, stop).await;
    let masker = services.masker();
    let clean = |text: &str| masker.mask(text.trim()).into_owned();
    let (stdout, stderr) = (clean(&ran.stdout), clean(&ran.stderr));
    match ran.end {
        ProgramEnd::Exited(0) => ScriptOutcome::Output(stdout),
        ProgramEnd::Exited(code) => {
            let mut why = format!("Script exited with code {code}");
            if !stderr.is_empty() {
                why.push_str(&format!("\nstderr:\n{stderr}"));
            }
            if !stdout.is_empty() {
                why.push_str(&format!("\nstdout:\n{stdout}"));
            }
            ScriptOutcome::Failed(why)
        }
        ProgramEnd::TimedOut => ScriptOutcome::Failed(format!(
            "Script timed out after {}s: {}",
            timeout.as_secs(),
            script.display()
        )),
        ProgramEnd::Interrupted => {
            ScriptOutcome::Failed("the script was stopped: hermesd is stopping".into())
        }
        ProgramEnd::SpawnFailed(why) => ScriptOutcome::Failed(why),
    }
}

/// Whether the output's last non-empty line is a JSON object saying `"wakeAgent": false`.
pub fn agent_asleep(output: &str) -> bool {
    let Some(last) = output.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        return false;
    };
    serde_json::from_str::<Value>(last)
        .ok()
        .and_then(|v| v.get("wakeAgent").cloned())
        == Some(Value::Bool(false))
}

/// The job's instruction with the script's output (or error) before it, as Hermes gives it.
pub fn with_script(outcome: &ScriptOutcome, instruction: &str) -> String {
    match outcome {
        ScriptOutcome::Output(out) => format!(
            "## Script Output\nThe following data was collected by a pre-run script. Use it as \
             context for your analysis.\n\n```\n{out}\n```\n\n{instruction}"
        ),
        ScriptOutcome::Failed(why) => format!(
            "## Script Error\nThe data-collection script failed. Report this to the \
             user.\n\n```\n{why}\n```\n\n{instruction}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_stays_in_the_scripts_directory() {
        let home = tempfile::tempdir().unwrap();
        let scripts = home.path().join("scripts");
        std::fs::create_dir_all(scripts.join("sub")).unwrap();
        std::fs::write(scripts.join("ok.py"), "print(1)").unwrap();
        std::fs::write(home.path().join("secret.sh"), "cat ~/.hermes/.env").unwrap();
        std::os::unix::fs::symlink(home.path().join("secret.sh"), scripts.join("link.sh")).unwrap();
        assert!(resolve(home.path(), "ok.py").is_ok());
        let outside = resolve(home.path(), "link.sh").unwrap_err();
        assert!(
            outside.starts_with("Blocked: script path resolves outside"),
            "{outside}"
        );
        let missing = resolve(home.path(), "nope.py").unwrap_err();
        assert!(missing.starts_with("Script not found:"), "{missing}");
        let dir = resolve(home.path(), "sub").unwrap_err();
        assert!(dir.starts_with("Script path is not a file:"), "{dir}");
    }

    #[test]
    fn the_wake_gate_reads_the_last_line_only() {
        assert!(agent_asleep("checked 4 feeds\n{\"wakeAgent\": false}\n"));
        assert!(!agent_asleep("{\"wakeAgent\": false}\nthen more"));
        assert!(!agent_asleep("{\"wakeAgent\": true}"));
        assert!(!agent_asleep("wakeAgent false"));
        assert!(!agent_asleep(""));
    }

    #[test]
    fn bash_for_shell_scripts_python_for_the_rest() {
        let bin = tempfile::tempdir().unwrap();
        std::fs::write(bin.path().join("python3"), "").unwrap();
        let path = bin.path().as_os_str();
        let found = interpreter(Path::new("/s/x.py"), Some(path));
        // The system's python3 comes first; one on PATH only when there is none.
        let system = SYSTEM_BIN
            .iter()
            .map(|d| Path::new(d).join("python3"))
            .find(|p| p.is_file());
        assert_eq!(found, system.unwrap_or_else(|| bin.path().join("python3")));
        assert_eq!(
            interpreter(Path::new("/s/x.sh"), Some(path)),
            exec::bash_path()
        );
        assert_eq!(interpreter(Path::new("/s/x.bash"), None), exec::bash_path());
    }
}
