//! The search overlay: a query over every session (the daemon's Search RPC) and its hits, one
//! per conversation; Enter runs a changed query or opens the highlighted hit.

use hermes_proto::pb;

#[derive(Debug, Default)]
pub struct Search {
    pub query: String,
    /// The query the hits belong to; `None` before the first search.
    pub searched: Option<String>,
    /// A search is out and its answer not yet here.
    pub waiting: bool,
    pub hits: Vec<pb::SearchHit>,
    pub selected: usize,
}

impl Search {
    /// The answer to `query`; an answer to an older query is ignored.
    pub fn results(&mut self, query: &str, hits: Vec<pb::SearchHit>) {
        if query != self.query.trim() {
            return;
        }
        self.waiting = false;
        self.searched = Some(query.to_string());
        self.hits = hits;
        self.selected = 0;
    }

    /// True when Enter should search rather than open a hit.
    pub fn is_stale(&self) -> bool {
        self.searched.as_deref() != Some(self.query.trim())
    }

    pub fn selected_hit(&self) -> Option<&pb::SearchHit> {
        self.hits.get(self.selected)
    }

    pub fn move_by(&mut self, delta: isize) {
        if self.hits.is_empty() {
            return;
        }
        self.selected = self
            .selected
            .saturating_add_signed(delta)
            .min(self.hits.len() - 1);
    }
}
