//! Audio conversion with `ffmpeg` when it is on the PATH: speech to OGG/Opus for Telegram's
//! voice messages (Hermes' settings: mono, 64 kb/s), and a voice note to 16 kHz WAV for a
//! transcriber that takes only WAV. Without ffmpeg the error says so and names the package.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    time::Duration,
};

use tokio_util::sync::CancellationToken;

use crate::exec::{self, ProgramEnd, ProgramRequest};

/// Hermes' limit on one conversion.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The first executable `name` on `path` (a `PATH` value).
pub fn find_on(path: Option<&std::ffi::OsStr>, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `ffmpeg` on the `PATH` of `env`, or the error to show.
pub fn find(env: &[(OsString, OsString)]) -> Result<PathBuf, String> {
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    find_on(path, "ffmpeg").ok_or_else(|| {
        "ffmpeg is not installed (not found on PATH), so the audio cannot be converted; \
         install it (Debian: apt-get install ffmpeg)"
            .to_string()
    })
}

async fn convert(
    env: Vec<(OsString, OsString)>,
    input: &Path,
    output: &Path,
    codec: &[&str],
) -> Result<(), String> {
    let ffmpeg = find(&env)?;
    let mut args: Vec<OsString> = vec!["-nostdin".into(), "-y".into(), "-i".into()];
    args.push(input.as_os_str().to_owned());
    args.extend(codec.iter().map(OsString::from));
    args.push(output.as_os_str().to_owned());
    let request = ProgramRequest {
        program: ffmpeg,
        args,
        cwd: std::env::temp_dir(),
        env,
        timeout: TIMEOUT,
        max_output_bytes: 16 * 1024,
    };
    let ran = exec::run_program(request, CancellationToken::new()).await;
    match ran.end {
        ProgramEnd::Exited(0) if std::fs::metadata(output).is_ok_and(|m| m.len() > 0) => Ok(()),
        ProgramEnd::Exited(0) => Err(format!("ffmpeg wrote nothing to {}", output.display())),
        ProgramEnd::TimedOut => Err(format!(
            "ffmpeg did not convert {} within {}s",
            input.display(),
            TIMEOUT.as_secs()
        )),
        other => {
            let tail: String = ran
                .stderr
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ");
            Err(format!(
                "ffmpeg could not convert {} ({other:?}): {tail}",
                input.display()
            ))
        }
    }
}

/// `input` as OGG/Opus beside it (`.ogg`); returns the new path.
pub async fn to_opus(env: Vec<(OsString, OsString)>, input: &Path) -> Result<PathBuf, String> {
    let output = input.with_extension("ogg");
    let codec = [
        "-acodec", "libopus", "-ac", "1", "-b:a", "64k", "-vbr", "off",
    ];
    convert(env, input, &output, &codec).await?;
    Ok(output)
}

/// `input` as 16 kHz mono WAV at `output`.
pub async fn to_wav(
    env: Vec<(OsString, OsString)>,
    input: &Path,
    output: &Path,
) -> Result<(), String> {
    convert(env, input, output, &["-ar", "16000", "-ac", "1"]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_ffmpeg_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".into(), dir.path().as_os_str().to_owned())];
        let why = find(&env).unwrap_err();
        assert!(why.contains("ffmpeg is not installed"), "{why}");
        assert!(find(&[]).is_err());
    }
}
