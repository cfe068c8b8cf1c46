//! When a batch of tool calls may run at once: every call must be parallel-safe or path-scoped
//! with a path no other call in the batch touches (a path and its parent overlap), and none may
//! be interactive. Otherwise the batch runs in order.

use std::path::{Component, Path, PathBuf};

/// How one call may share time with the others of its batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Concurrency {
    /// Never beside anything (`clarify`: it asks the user).
    Never,
    /// Read-only, no shared state: any number at once.
    Safe,
    /// Touches these paths (already resolved against the cwd); parallel when disjoint.
    PathScoped(Vec<PathBuf>),
    /// Side effects that need order (`terminal`, `memory`, …).
    Sequential,
}

/// At most this many calls run at once.
pub const MAX_PARALLEL: usize = 8;

/// Whether the batch may run concurrently.
pub fn plan_batch(calls: &[Concurrency]) -> bool {
    if calls.len() < 2 {
        return false;
    }
    let mut reserved: Vec<Vec<Component<'_>>> = Vec::new();
    for call in calls {
        match call {
            Concurrency::Safe => {}
            Concurrency::Never | Concurrency::Sequential => return false,
            Concurrency::PathScoped(paths) => {
                if paths.is_empty() {
                    return false;
                }
                for path in paths {
                    let parts: Vec<Component<'_>> = path.components().collect();
                    if parts.is_empty() || reserved.iter().any(|r| overlaps(r, &parts)) {
                        return false;
                    }
                    reserved.push(parts);
                }
            }
        }
    }
    true
}

fn overlaps(a: &[Component<'_>], b: &[Component<'_>]) -> bool {
    let shorter = a.len().min(b.len());
    a[..shorter] == b[..shorter]
}

/// `path` with `.` removed and `..` applied lexically (the file may not exist yet, so no
/// canonicalisation).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scoped(p: &str) -> Concurrency {
        Concurrency::PathScoped(vec![normalize(Path::new(p))])
    }

    #[test]
    fn single_calls_and_unsafe_calls_run_in_order() {
        assert!(!plan_batch(&[Concurrency::Safe]));
        assert!(!plan_batch(&[Concurrency::Safe, Concurrency::Sequential]));
        assert!(!plan_batch(&[Concurrency::Safe, Concurrency::Never]));
    }

    #[test]
    fn disjoint_paths_run_together_and_overlapping_ones_do_not() {
        assert!(plan_batch(&[
            scoped("/a/x.txt"),
            scoped("/a/y.txt"),
            Concurrency::Safe
        ]));
        assert!(!plan_batch(&[scoped("/a/x.txt"), scoped("/a/x.txt")]));
        assert!(!plan_batch(&[scoped("/a"), scoped("/a/b/c.txt")]));
        assert!(!plan_batch(&[scoped("/a/./b/../x"), scoped("/a/x")]));
        assert!(plan_batch(&[scoped("/a/xy"), scoped("/a/x")]));
    }
}
