//! `hermesctl sessions search|export|title|branch|undo|retry|compress|prune`: a conversation's
//! history, found, printed, rewound and pruned.

use hermes_proto::pb;
use serde_json::{Value, json};

use crate::{cli::SessionsCommand, connection::Daemon, context::Context, error::CliError, output};

/// Run one of the history commands (`sessions::run` handles the others).
pub async fn run(ctx: &Context, daemon: &Daemon, command: SessionsCommand) -> Result<(), CliError> {
    let mut sessions = daemon.sessions();
    match command {
        SessionsCommand::Search {
            query,
            limit,
            source,
            role,
            since,
            until,
            all_matches,
        } => {
            let request = pb::SearchSessionsRequest {
                query,
                limit,
                source: source.unwrap_or_default(),
                role: role.unwrap_or_default(),
                since: since.as_deref().map(parse_when).transpose()?,
                until: until.as_deref().map(parse_when).transpose()?,
                all_matches,
            };
            let hits = sessions.search(request).await?.into_inner().hits;
            if ctx.json {
                output::json(&Value::Array(hits.iter().map(hit_json).collect()));
            } else if hits.is_empty() {
                output::line("no matches");
            } else {
                for hit in &hits {
                    let title = if hit.title.is_empty() {
                        "(untitled)"
                    } else {
                        &hit.title
                    };
                    output::line(format!(
                        "{}  {title}  · {} · {}",
                        hit.session_id,
                        hit.role,
                        output::when(hit.created_at.as_ref())
                    ));
                    output::line(format!("    {}", hit.snippet.replace('\n', " ")));
                }
            }
        }
        SessionsCommand::Export { id, format } => {
            let format = match format.as_str() {
                "jsonl" => pb::ExportFormat::Jsonl,
                _ => pb::ExportFormat::Markdown,
            };
            let content = sessions
                .export(pb::ExportSessionRequest {
                    id,
                    format: format as i32,
                })
                .await?
                .into_inner()
                .content;
            output::print(&content);
        }
        SessionsCommand::Title { id, title } => title_command(ctx, daemon, id, title).await?,
        SessionsCommand::Branch { id, at, title } => {
            let session = sessions
                .branch(pb::BranchSessionRequest {
                    id,
                    up_to_message_id: at.unwrap_or(0),
                    title: title.unwrap_or_default(),
                })
                .await?
                .into_inner()
                .session
                .ok_or_else(|| CliError::new("hermesd returned no session"))?;
            if ctx.json {
                output::json(
                    &json!({"id": session.id, "parent_session_id": session.parent_session_id,
                    "message_count": session.message_count, "title": session.title}),
                );
            } else {
                output::line(format!(
                    "branched into {} ({} messages); continue it with `hermesctl chat {}`",
                    session.id, session.message_count, session.id
                ));
            }
        }
        SessionsCommand::Undo { id } => {
            let removed = sessions
                .undo(pb::UndoSessionRequest { id: id.clone() })
                .await?
                .into_inner()
                .removed_messages;
            if ctx.json {
                output::json(&json!({"id": id, "removed_messages": removed}));
            } else {
                output::line(format!("removed the last exchange ({removed} messages)"));
            }
        }
        SessionsCommand::Retry { id } => {
            let result = sessions
                .retry(pb::RetrySessionRequest { id })
                .await?
                .into_inner()
                .result
                .unwrap_or_default();
            if ctx.json {
                output::json(
                    &json!({"session_id": result.session_id, "answer": result.answer,
                    "iterations": result.iterations, "tool_calls": result.tool_calls}),
                );
            } else {
                output::line(&result.answer);
            }
        }
        SessionsCommand::Compress { id } => {
            let done = sessions
                .compress(pb::CompressSessionRequest { id })
                .await?
                .into_inner();
            if ctx.json {
                output::json(&json!({"new_segment_id": done.new_segment_id,
                    "tokens_before": done.tokens_before, "tokens_after": done.tokens_after}));
            } else {
                output::line(format!(
                    "compressed: ~{} → ~{} tokens; the conversation goes on in segment {}",
                    done.tokens_before, done.tokens_after, done.new_segment_id
                ));
            }
        }
        SessionsCommand::Prune {
            older_than,
            dry_run,
        } => {
            let days = match older_than {
                Some(age) => parse_days(&age)?,
                None => default_retention_days(daemon),
            };
            let done = sessions
                .prune(pb::PruneSessionsRequest {
                    older_than_days: days,
                    dry_run,
                })
                .await?
                .into_inner();
            if ctx.json {
                output::json(
                    &json!({"deleted": done.deleted, "kept_live": done.kept_live,
                    "older_than_days": days, "dry_run": dry_run}),
                );
            } else {
                let verb = if dry_run { "would delete" } else { "deleted" };
                let kept = if done.kept_live > 0 {
                    format!("; {} in use kept", done.kept_live)
                } else {
                    String::new()
                };
                output::line(format!(
                    "{verb} {} conversation{} idle for more than {days} days{kept}",
                    done.deleted,
                    if done.deleted == 1 { "" } else { "s" }
                ));
            }
        }
        SessionsCommand::List { .. }
        | SessionsCommand::Show { .. }
        | SessionsCommand::Rm { .. }
        | SessionsCommand::Busy { .. }
        | SessionsCommand::Resume { .. } => {
            return Err(CliError::new("not a history command"));
        }
    }
    Ok(())
}

async fn title_command(
    ctx: &Context,
    daemon: &Daemon,
    id: String,
    title: Option<String>,
) -> Result<(), CliError> {
    let mut sessions = daemon.sessions();
    let session = match title {
        Some(title) => {
            sessions
                .rename(pb::RenameSessionRequest { id, title })
                .await?
                .into_inner()
                .session
        }
        None => {
            sessions
                .get(pb::GetSessionRequest {
                    id,
                    include_messages: false,
                })
                .await?
                .into_inner()
                .session
        }
    }
    .ok_or_else(|| CliError::new("hermesd returned no session"))?;
    if ctx.json {
        output::json(&json!({"id": session.id, "title": session.title}));
    } else if session.title.is_empty() {
        output::line("(untitled)");
    } else {
        output::line(&session.title);
    }
    Ok(())
}

fn hit_json(hit: &pb::SearchHit) -> Value {
    json!({
        "session_id": hit.session_id,
        "segment_id": hit.segment_id,
        "title": hit.title,
        "source": hit.source,
        "message_id": hit.message_id,
        "role": hit.role,
        "snippet": hit.snippet,
        "score": hit.score,
        "created_at": output::timestamp(hit.created_at.as_ref()),
    })
}

/// `sessions.retention_days` from the daemon's config.yaml, else 90 (Python Hermes' default).
fn default_retention_days(daemon: &Daemon) -> u32 {
    let path = std::path::Path::new(&daemon.status.home).join("config.yaml");
    hermes_proto::yaml_edit::read_config(&path)
        .ok()
        .and_then(|text| {
            hermes_proto::yaml_edit::get(&text, "sessions.retention_days")
                .ok()
                .flatten()
        })
        .and_then(|v| v.as_u64())
        .filter(|d| *d > 0)
        .map_or(90, |d| d.min(u64::from(u32::MAX)) as u32)
}

/// An age such as `30d`, `12w`, `48h` (rounded up to whole days) or a bare number of days.
pub fn parse_days(age: &str) -> Result<u32, CliError> {
    let hours = parse_age_hours(age)?;
    Ok(hours.div_ceil(24).max(1).min(u64::from(u32::MAX)) as u32)
}

fn parse_age_hours(age: &str) -> Result<u64, CliError> {
    let age = age.trim();
    let (number, unit) = age.split_at(age.find(|c: char| !c.is_ascii_digit()).unwrap_or(age.len()));
    let bad = || {
        CliError::new(format!(
            "`{age}` is not an age; write a number with d (days), w (weeks) or h (hours), e.g. 30d"
        ))
    };
    let n: u64 = number.parse().map_err(|_| bad())?;
    let per = match unit {
        "" | "d" => 24,
        "w" => 24 * 7,
        "h" => 1,
        _ => return Err(bad()),
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(n.saturating_mul(per))
}

/// A point in time: an RFC 3339 timestamp, a date (midnight UTC), or an age ago (7d, 12h).
fn parse_when(text: &str) -> Result<prost_types::Timestamp, CliError> {
    let text = text.trim();
    let at = if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        t.with_timezone(&chrono::Utc)
    } else if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        d.and_time(chrono::NaiveTime::MIN).and_utc()
    } else {
        let hours = parse_age_hours(text).map_err(|_| {
            CliError::new(format!(
                "`{text}` is not a time; write 2026-11-30, 2026-11-30T08:00:00Z or an age like 7d"
            ))
        })?;
        chrono::Utc::now()
            - chrono::Duration::hours(i64::try_from(hours).unwrap_or(i64::MAX / 3_600_000))
    };
    Ok(prost_types::Timestamp {
        seconds: at.timestamp(),
        nanos: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_times_parse_or_explain() {
        assert_eq!(parse_days("30d").ok(), Some(30));
        assert_eq!(parse_days("2w").ok(), Some(14));
        assert_eq!(parse_days("36h").ok(), Some(2));
        assert_eq!(parse_days("7").ok(), Some(7));
        assert!(parse_days("0d").is_err());
        assert!(parse_days("soon").is_err());
        assert_eq!(
            parse_when("2026-11-30").map(|t| t.seconds).ok(),
            Some(1_795_996_800)
        );
        assert!(parse_when("2026-11-30T08:00:00Z").is_ok());
        assert!(parse_when("yesterday").is_err());
    }
}
