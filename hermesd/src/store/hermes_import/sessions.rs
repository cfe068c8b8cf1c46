//! Per-session decisions of an import: create, update, or skip each Python session, build its
//! hermesd segments and links, and afterwards settle counters and bookkeeping.

use std::{
    collections::{HashMap, HashSet},
    time::{SystemTime, UNIX_EPOCH},
};

use rusqlite::Connection;

use super::{
    ARCHIVE_SUFFIX, ImportReport, StoreError, convert,
    lineage::{self, Lineage, Plan},
    source::{self, MessageStats, Schema, SourceSession},
    target::{self, Bookkeeping, Existing, Segment},
};

/// Where the new messages of one Python session go.
#[derive(Debug)]
pub(super) struct Route {
    /// The hermesd session holding the live rows (the Python id).
    pub live: String,
    /// The `-compacted` segment, when the session has compacted rows.
    pub archive: Option<String>,
    /// Rows with ids up to this were handled by an earlier import.
    pub watermark: i64,
    /// Epoch ms for rows without a usable timestamp.
    pub fallback_ms: i64,
    /// Bookkeeping from the earlier import, if any.
    pub previous: Option<Bookkeeping>,
    /// Messages inserted by this run.
    pub inserted: usize,
    /// Whether imported messages moved to a new or grown `-compacted` segment.
    pub resegmented: bool,
}

fn archive_id(id: &str) -> String {
    format!("{id}{ARCHIVE_SUFFIX}")
}

/// Whether hermesd moved on with an imported session: own messages after the imported ones, or
/// a compression segment the import did not create.
fn continued_in_hermesd(
    conn: &Connection,
    id: &str,
    existing: &Existing,
    book: &Bookkeeping,
    books: &HashMap<String, Bookkeeping>,
) -> Result<bool, StoreError> {
    if let Some(next) = existing.continued_by.as_deref() {
        let imported = next.strip_suffix(ARCHIVE_SUFFIX).unwrap_or(next);
        if !books.contains_key(imported) {
            return Ok(true);
        }
    }
    Ok(target::max_message_id(conn, id)? > book.last_message_id)
}

/// What `prepare` works with while it walks the sessions.
struct Planner<'a> {
    source: &'a Connection,
    target: &'a Connection,
    schema: &'a Schema,
    sessions: &'a [SourceSession],
    plan: &'a Plan,
    books: HashMap<String, Bookkeeping>,
    /// Python sessions that exist in hermesd as imports (children may link to them).
    present: HashSet<&'a str>,
    routes: HashMap<String, Route>,
}

impl<'a> Planner<'a> {
    fn skip(&self, report: &mut ImportReport, id: &str, after: i64) -> Result<(), StoreError> {
        report.skipped_sessions += 1;
        report.skipped_messages += source::count_after(self.source, id, after)?;
        Ok(())
    }

    fn route(
        &mut self,
        session: &SourceSession,
        previous: Option<Bookkeeping>,
        archive: Option<String>,
    ) -> &mut Route {
        let route = Route {
            live: session.id.clone(),
            archive,
            watermark: previous.map_or(0, |b| b.source_max_message_id),
            fallback_ms: convert::millis(session.started_at),
            previous,
            inserted: 0,
            resegmented: false,
        };
        self.routes
            .entry(session.id.clone())
            .insert_entry(route)
            .into_mut()
    }

    /// First import of session `i`: its segment(s) and links.
    fn create(
        &mut self,
        i: usize,
        stat: &MessageStats,
        report: &mut ImportReport,
    ) -> Result<(), StoreError> {
        let session = &self.sessions[i];
        let id = session.id.as_str();
        let needs_archive = stat.max_compacted_id.is_some();
        let archive = archive_id(id);
        if needs_archive && target::existing(self.target, &archive)?.is_some() {
            return self.skip(report, id, 0);
        }
        let link = self.plan.links[i];
        let parent = link
            .parent
            .map(|p| self.sessions[p].id.as_str())
            .filter(|p| self.present.contains(p));
        let mut lineage = match parent {
            Some(_) => link.lineage,
            None => lineage::without_parent(session),
        };
        let entry = if needs_archive { archive.as_str() } else { id };
        if let (Some(parent), Lineage::Compression) = (parent, lineage) {
            let taken = target::existing(self.target, parent)?.and_then(|e| e.continued_by);
            if taken.is_some_and(|next| next != entry) {
                lineage = Lineage::Branch;
            }
        }
        target::insert_segment(
            self.target,
            &Segment {
                id: entry,
                parent,
                lineage: lineage.as_str(),
                session,
                archive: needs_archive,
            },
        )?;
        if needs_archive {
            let live = Segment {
                id,
                parent: Some(entry),
                lineage: Lineage::Compression.as_str(),
                session,
                archive: false,
            };
            target::insert_segment(self.target, &live)?;
            target::set_continued_by(self.target, entry, id)?;
        }
        if let (Some(parent), Lineage::Compression) = (parent, lineage) {
            target::set_continued_by(self.target, parent, entry)?;
        }
        self.present.insert(id);
        report.sessions += 1;
        self.route(session, None, needs_archive.then_some(archive));
        Ok(())
    }

    /// Later import of an imported session that has new rows.
    fn update(
        &mut self,
        i: usize,
        stat: &MessageStats,
        book: Bookkeeping,
        existing: &Existing,
        report: &mut ImportReport,
    ) -> Result<(), StoreError> {
        let session = &self.sessions[i];
        let id = session.id.as_str();
        if continued_in_hermesd(self.target, id, existing, &book, &self.books)? {
            return self.skip(report, id, book.source_max_message_id);
        }
        let archive = archive_id(id);
        let mut resegmented = false;
        if stat.max_compacted_id.is_some() {
            let had_archive = book.source_max_compacted_id > 0;
            match (
                had_archive,
                target::existing(self.target, &archive)?.is_some(),
            ) {
                (false, true) => return self.skip(report, id, book.source_max_message_id),
                (_, false) => {
                    target::insert_archive_before(self.target, &archive, id, session, existing)?;
                    resegmented = true;
                }
                (true, true) => {}
            }
            let (after, up_to) = (book.source_max_compacted_id, book.source_max_message_id);
            if source::compacted_between(self.source, self.schema, id, after, up_to)? {
                target::move_messages(self.target, id, &archive)?;
                resegmented = true;
            }
        }
        target::refresh_session(self.target, session)?;
        let archive = stat.max_compacted_id.map(|_| archive);
        self.route(session, Some(book), archive).resegmented = resegmented;
        Ok(())
    }
}

/// Decide and write the session rows, parents first; returns the routes for the message copy,
/// keyed by the Python session id.
pub(super) fn prepare(
    source: &Connection,
    target: &Connection,
    schema: &Schema,
    sessions: &[SourceSession],
    stats: &HashMap<String, MessageStats>,
    plan: &Plan,
    report: &mut ImportReport,
) -> Result<HashMap<String, Route>, StoreError> {
    let mut planner = Planner {
        source,
        target,
        schema,
        sessions,
        plan,
        books: target::load_bookkeeping(target)?,
        present: HashSet::new(),
        routes: HashMap::new(),
    };
    for &i in &plan.order {
        let session = &sessions[i];
        let id = session.id.as_str();
        let stat = stats.get(id).copied().unwrap_or_default();
        let book = planner.books.get(id).copied();
        match (book, target::existing(target, id)?) {
            (None, None) => planner.create(i, &stat, report)?,
            (Some(book), Some(existing)) => {
                planner.present.insert(id);
                if stat.max_id > book.source_max_message_id {
                    planner.update(i, &stat, book, &existing, report)?;
                }
            }
            // hermesd's own session, or imported once and deleted in hermesd since.
            (None, Some(_)) => planner.skip(report, id, 0)?,
            (Some(book), None) => planner.skip(report, id, book.source_max_message_id)?,
        }
    }
    Ok(planner.routes)
}

/// Settle counters, timestamps and bookkeeping of every routed session.
pub(super) fn finish(
    target: &Connection,
    stats: &HashMap<String, MessageStats>,
    routes: &HashMap<String, Route>,
    report: &mut ImportReport,
) -> Result<(), StoreError> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    for (id, route) in routes {
        let stat = stats.get(id).copied().unwrap_or_default();
        target::settle_counts(target, &route.live, false)?;
        if let Some(archive) = &route.archive {
            target::settle_counts(target, archive, true)?;
        }
        let previous = route.previous.unwrap_or_default();
        if route.previous.is_some() && (route.inserted > 0 || route.resegmented) {
            report.updated_sessions += 1;
        }
        let book = Bookkeeping {
            source_max_message_id: stat.max_id.max(previous.source_max_message_id),
            source_max_compacted_id: stat
                .max_compacted_id
                .unwrap_or(0)
                .max(previous.source_max_compacted_id),
            last_message_id: target::max_message_id(target, &route.live)?
                .max(previous.last_message_id),
        };
        target::save_bookkeeping(target, id, &book, now_ms)?;
    }
    Ok(())
}
