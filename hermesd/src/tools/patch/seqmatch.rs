//! Character-level port of Python's `difflib.SequenceMatcher` (no junk function, autojunk on):
//! the similarity ratio and edit opcodes the fuzzy matcher's thresholds were tuned against.

/// One edit step turning `a[a_start..a_end]` into `b[b_start..b_end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Opcode {
    pub(super) tag: OpTag,
    pub(super) a_start: usize,
    pub(super) a_end: usize,
    pub(super) b_start: usize,
    pub(super) b_end: usize,
}

/// Kind of an [`Opcode`], as in difflib.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OpTag {
    Equal,
    Replace,
    Delete,
    Insert,
}

/// A matching block: `a[a..a + len] == b[b..b + len]`.
#[derive(Debug, Clone, Copy)]
struct Block {
    a: usize,
    b: usize,
    len: usize,
}

/// Below this length of `b`, difflib does not discard popular elements.
const AUTOJUNK_MIN_LEN: usize = 200;

/// Similarity of two strings in `[0, 1]`, equal to `SequenceMatcher(None, a, b).ratio()`.
#[cfg(test)]
pub(super) fn ratio(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    Matcher::default().ratio(&a, &b)
}

/// Cheap upper bound of [`Matcher::ratio`] from the lengths alone (difflib's `real_quick_ratio`).
pub(super) fn ratio_upper_bound(a_len: usize, b_len: usize) -> f64 {
    let total = a_len + b_len;
    if total == 0 {
        return 1.0;
    }
    2.0 * a_len.min(b_len) as f64 / total as f64
}

/// Edit opcodes turning `a` into `b`, equal to `SequenceMatcher(None, a, b).get_opcodes()`.
pub(super) fn opcodes(a: &[char], b: &[char]) -> Vec<Opcode> {
    let mut result = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut blocks = matching_blocks(a, b);
    blocks.push(Block {
        a: a.len(),
        b: b.len(),
        len: 0,
    });
    for block in blocks {
        let tag = match (i < block.a, j < block.b) {
            (true, true) => Some(OpTag::Replace),
            (true, false) => Some(OpTag::Delete),
            (false, true) => Some(OpTag::Insert),
            (false, false) => None,
        };
        if let Some(tag) = tag {
            result.push(Opcode {
                tag,
                a_start: i,
                a_end: block.a,
                b_start: j,
                b_end: block.b,
            });
        }
        i = block.a + block.len;
        j = block.b + block.len;
        if block.len > 0 {
            result.push(Opcode {
                tag: OpTag::Equal,
                a_start: block.a,
                a_end: i,
                b_start: block.b,
                b_end: j,
            });
        }
    }
    result
}

/// Sorted, merged matching blocks (without difflib's trailing sentinel).
fn matching_blocks(a: &[char], b: &[char]) -> Vec<Block> {
    let mut matcher = Matcher::default();
    let mut found = matcher.blocks(a, b).to_vec();
    found.sort_unstable_by_key(|block| (block.a, block.b));
    let mut merged: Vec<Block> = Vec::with_capacity(found.len());
    for block in found {
        match merged.last_mut() {
            Some(last) if last.a + last.len == block.a && last.b + last.len == block.b => {
                last.len += block.len;
            }
            _ => merged.push(block),
        }
    }
    merged
}

/// difflib's matcher state with buffers reused across comparisons.
#[derive(Default)]
pub(super) struct Matcher {
    /// `(char, position)` of each non-popular character of `b`, sorted (difflib's `b2j`).
    index: Vec<(char, usize)>,
    /// Run lengths of the current and previous rows, indexed by `b` position.
    current: Vec<usize>,
    previous: Vec<usize>,
    /// Positions set in `current` / `previous`, to reset them cheaply.
    current_set: Vec<usize>,
    previous_set: Vec<usize>,
    /// For each character of `a`, its `index` range.
    a_ranges: Vec<(usize, usize)>,
    queue: Vec<(usize, usize, usize, usize)>,
    found: Vec<Block>,
}

impl Matcher {
    /// Similarity of `a` and `b` in `[0, 1]`, equal to `SequenceMatcher(None, a, b).ratio()`.
    pub(super) fn ratio(&mut self, a: &[char], b: &[char]) -> f64 {
        let total = a.len() + b.len();
        if total == 0 {
            return 1.0;
        }
        let matched: usize = self.blocks(a, b).iter().map(|block| block.len).sum();
        2.0 * matched as f64 / total as f64
    }

    /// The (unsorted) matching blocks of `a` and `b`.
    fn blocks(&mut self, a: &[char], b: &[char]) -> &[Block] {
        self.build_index(b);
        let index = &self.index;
        self.a_ranges.clear();
        self.a_ranges.extend(a.iter().map(|&ch| {
            let start = index.partition_point(|&(other, _)| other < ch);
            (
                start,
                start + index[start..].partition_point(|&(other, _)| other == ch),
            )
        }));
        self.current.clear();
        self.current.resize(b.len(), 0);
        self.previous.clear();
        self.previous.resize(b.len(), 0);
        self.current_set.clear();
        self.previous_set.clear();
        self.found.clear();
        self.queue.clear();
        self.queue.push((0, a.len(), 0, b.len()));
        while let Some((a_lo, a_hi, b_lo, b_hi)) = self.queue.pop() {
            let block = self.longest_match(a, b, (a_lo, a_hi, b_lo, b_hi));
            if block.len == 0 {
                continue;
            }
            self.found.push(block);
            if a_lo < block.a && b_lo < block.b {
                self.queue.push((a_lo, block.a, b_lo, block.b));
            }
            if block.a + block.len < a_hi && block.b + block.len < b_hi {
                self.queue
                    .push((block.a + block.len, a_hi, block.b + block.len, b_hi));
            }
        }
        &self.found
    }

    fn build_index(&mut self, b: &[char]) {
        self.index.clear();
        self.index
            .extend(b.iter().enumerate().map(|(j, &ch)| (ch, j)));
        self.index.sort_unstable();
        if b.len() >= AUTOJUNK_MIN_LEN {
            let popular_limit = b.len() / 100 + 1;
            let mut kept = 0;
            let mut run_start = 0;
            while run_start < self.index.len() {
                let ch = self.index[run_start].0;
                let run_end =
                    run_start + self.index[run_start..].partition_point(|&(other, _)| other == ch);
                if run_end - run_start <= popular_limit {
                    self.index.copy_within(run_start..run_end, kept);
                    kept += run_end - run_start;
                }
                run_start = run_end;
            }
            self.index.truncate(kept);
        }
    }

    /// difflib's `find_longest_match` for `a[a_lo..a_hi]` and `b[b_lo..b_hi]`.
    fn longest_match(
        &mut self,
        a: &[char],
        b: &[char],
        (a_lo, a_hi, b_lo, b_hi): (usize, usize, usize, usize),
    ) -> Block {
        let (mut best_a, mut best_b, mut best_len) = (a_lo, b_lo, 0);
        for i in a_lo..a_hi {
            let (start, end) = self.a_ranges[i];
            for &(_, j) in &self.index[start..end] {
                if j >= b_hi {
                    break;
                }
                if j < b_lo {
                    continue;
                }
                let run = if j > 0 { self.previous[j - 1] } else { 0 } + 1;
                self.current[j] = run;
                self.current_set.push(j);
                if run > best_len {
                    best_a = i + 1 - run;
                    best_b = j + 1 - run;
                    best_len = run;
                }
            }
            for &j in &self.previous_set {
                self.previous[j] = 0;
            }
            self.previous_set.clear();
            std::mem::swap(&mut self.current, &mut self.previous);
            std::mem::swap(&mut self.current_set, &mut self.previous_set);
        }
        for &j in &self.previous_set {
            self.previous[j] = 0;
        }
        self.previous_set.clear();
        // No junk function, so difflib extends the match over any equal neighbours
        // (popular characters included).
        while best_a > a_lo && best_b > b_lo && a[best_a - 1] == b[best_b - 1] {
            best_a -= 1;
            best_b -= 1;
            best_len += 1;
        }
        while best_a + best_len < a_hi
            && best_b + best_len < b_hi
            && a[best_a + best_len] == b[best_b + best_len]
        {
            best_len += 1;
        }
        Block {
            a: best_a,
            b: best_b,
            len: best_len,
        }
    }
}
