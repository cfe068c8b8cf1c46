//! `/voice` (Hermes' command and file): a chat's spoken-reply mode — `off`, `voice_only`
//! (`/voice on`: voice messages are answered with speech too) or `all` (`/voice tts`: every
//! answer) — kept in `$HERMES_HOME/gateway_voice_mode.json` as `{"telegram:<chat>": mode}`, the
//! file Python Hermes keeps, written whole and atomically. A chat without an entry follows
//! `voice.auto_tts` (`voice_only` when true).

use std::{collections::BTreeMap, path::Path};

use super::Gateway;

/// Hermes' file name.
pub const FILE: &str = "gateway_voice_mode.json";
const MODES: &[&str] = &["off", "voice_only", "all"];

/// Serialises read-modify-write of the file.
static WRITING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn read(home: &Path) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(home.join(FILE)) else {
        return BTreeMap::new();
    };
    let parsed: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_default();
    parsed
        .into_iter()
        .filter_map(|(k, v)| {
            let mode = v.as_str()?.to_string();
            (k.contains(':') && MODES.contains(&mode.as_str())).then_some((k, mode))
        })
        .collect()
}

fn write(home: &Path, modes: &BTreeMap<String, String>) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let text = serde_json::to_string_pretty(modes).map_err(|e| e.to_string())?;
    let path = home.join(FILE);
    let tmp = home.join(format!(".{FILE}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

/// The mode of `chat` on `platform`.
pub async fn mode(gateway: &Gateway, platform: &str, chat: &str) -> String {
    let home = gateway.home.clone();
    let key = format!("{platform}:{chat}");
    let found = tokio::task::spawn_blocking(move || read(&home).remove(&key))
        .await
        .ok()
        .flatten();
    found.unwrap_or_else(|| {
        if gateway.runner.config().settings.tts.auto_tts {
            "voice_only".into()
        } else {
            "off".into()
        }
    })
}

async fn set(gateway: &Gateway, platform: &str, chat: &str, mode: &str) -> Result<(), String> {
    let _writing = WRITING.lock().await;
    let home = gateway.home.clone();
    let (key, mode) = (format!("{platform}:{chat}"), mode.to_string());
    tokio::task::spawn_blocking(move || {
        let mut modes = read(&home);
        modes.insert(key, mode);
        write(&home, &modes)
    })
    .await
    .map_err(|e| format!("the write failed: {e}"))?
}

/// `/voice [on|off|tts|status]`; a bare `/voice` toggles between off and on.
pub async fn command(gateway: &Gateway, platform: &str, chat: &str, args: &str) -> String {
    let current = mode(gateway, platform, chat).await;
    let args = args.trim().to_lowercase();
    let wanted = match args.as_str() {
        "on" | "enable" => "voice_only",
        "off" | "disable" => "off",
        "tts" => "all",
        "status" => {
            return format!("Voice mode: {}", label(&current));
        }
        "" if current == "off" => "voice_only",
        "" => "off",
        other => return format!("Unknown /voice option {other:?}: say on, off, tts or status."),
    };
    if let Err(why) = set(gateway, platform, chat, wanted).await {
        return format!("⚠️ The voice mode was not saved: {why}");
    }
    let problem = match (wanted, gateway.runner.config().settings.tts.resolve()) {
        ("off", _) | (_, Ok(_)) => String::new(),
        (_, Err(why)) => format!("\n⚠️ Speech is not set up yet: {why}"),
    };
    let said = match wanted {
        "voice_only" => "🔊 Voice mode on: I'll answer voice messages with a voice message too.",
        "all" => "🔊 Voice replies on: every answer also comes as a voice message.",
        _ => "🔇 Voice mode off: text replies only.",
    };
    format!("{said}{problem}")
}

fn label(mode: &str) -> &'static str {
    match mode {
        "voice_only" => "on (voice messages are answered with voice)",
        "all" => "tts (every answer is also spoken)",
        _ => "off (text only)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_hermes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            r#"{"telegram:1": "all", "2": "all", "telegram:3": "loud"}"#,
        )
        .unwrap();
        let modes = read(dir.path());
        assert_eq!(modes.len(), 1);
        let mut modes = modes;
        modes.insert("telegram:4".into(), "voice_only".into());
        write(dir.path(), &modes).unwrap();
        assert_eq!(read(dir.path()).get("telegram:4").unwrap(), "voice_only");
    }
}
