//! Tests for splitting: limits, cut preferences, fences, counters, and a
//! seeded property test over random documents.

use super::super::markup::tests::check_telegram_html;
use super::super::markup::{to_plain_text, to_telegram_html};
use super::{TELEGRAM_MAX, split_markdown, utf16_len};

/// What Telegram counts for a piece sent as HTML, checking the HTML on the way.
fn telegram_len(piece: &str) -> usize {
    let html = to_telegram_html(piece);
    match check_telegram_html(&html) {
        Ok(visible) => utf16_len(&visible),
        Err(problem) => panic!("{problem}\npiece: {piece:?}\nhtml: {html:?}"),
    }
}

/// Asserts every piece fits as HTML and as the plain retry, and carries no
/// leading or trailing blank lines.
fn assert_pieces_fit(pieces: &[String], limit: usize) {
    for piece in pieces {
        assert!(telegram_len(piece) <= limit, "HTML over {limit}: {piece:?}");
        assert!(
            utf16_len(&to_plain_text(piece)) <= limit,
            "plain: {piece:?}"
        );
        let blank = |line: Option<&str>| line.is_none_or(|line| line.trim().is_empty());
        let edges = [piece.lines().next(), piece.lines().last()];
        assert!(!edges.into_iter().any(blank), "blank edge: {piece:?}");
    }
}

/// The pieces with their `(i/n)` counters checked and removed.
fn strip_counters(pieces: &[String]) -> Vec<String> {
    let total = pieces.len();
    let strip = |(index, piece): (usize, &String)| {
        let counter = format!("\n\n({}/{total})", index + 1);
        match piece.strip_suffix(&counter) {
            Some(body) => body.to_owned(),
            None => panic!("piece {index} lacks {counter:?}: {piece:?}"),
        }
    };
    pieces.iter().enumerate().map(strip).collect()
}

fn joined(items: impl Iterator<Item = impl std::fmt::Display>, separator: &str) -> String {
    items
        .map(|item| item.to_string())
        .collect::<Vec<_>>()
        .join(separator)
}

/// A tiny xorshift generator, so the "random" documents are reproducible.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Lines from `make` until they add up to at least `total` bytes.
fn lines_until(total: usize, mut make: impl FnMut(usize) -> String) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    while lines.iter().map(|line| line.len() + 1).sum::<usize>() < total {
        lines.push(make(lines.len()));
    }
    lines
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

fn prose(rng: &mut XorShift, words: usize) -> String {
    const VOCAB: [&str; 6] = ["alpha", "beta", "gamma", "délta", "ε", "zeta"];
    joined((0..words).map(|_| VOCAB[rng.below(VOCAB.len())]), " ")
}

#[test]
fn utf16_len_counts_code_units() {
    assert_eq!(utf16_len(""), 0);
    assert_eq!(utf16_len("abc"), 3);
    assert_eq!(utf16_len("é中"), 2);
    assert_eq!(utf16_len("😀"), 2);
    assert_eq!(utf16_len("𝄞a😀"), 5);
    assert_eq!(utf16_len("👍🏽"), 4);
    assert_eq!(TELEGRAM_MAX, 4096);
}

#[test]
fn text_within_the_limit_comes_back_unchanged() {
    let (full, emoji, markup) = ("x".repeat(4096), "😀".repeat(2048), "**a** ".repeat(1_000));
    for text in ["", "hello", "\n\n  *spaced*  \n\n", &full, &emoji, &markup] {
        assert_eq!(split_markdown(text, TELEGRAM_MAX), vec![text.to_owned()]);
    }
}

#[test]
fn ten_thousand_chars_split_on_paragraphs() {
    let mut rng = XorShift(7);
    let paragraphs = lines_until(10_000, |_| {
        let count = 20 + rng.below(60);
        prose(&mut rng, count)
    });
    let text = paragraphs.join("\n\n");
    let pieces = split_markdown(&text, TELEGRAM_MAX);
    assert!(pieces.len() >= 3, "{} pieces", pieces.len());
    assert_pieces_fit(&pieces, TELEGRAM_MAX);
    let bodies = strip_counters(&pieces);
    let rejoined = bodies.join("\n\n");
    assert_eq!(words(&rejoined), words(&text), "all words, in order");
    for body in &bodies {
        for paragraph in body.split("\n\n") {
            assert!(
                paragraphs.iter().any(|p| p == paragraph),
                "cut in {paragraph:?}"
            );
        }
    }
    let used = bodies.iter().map(|body| utf16_len(body)).sum::<usize>() / bodies.len();
    assert!(
        used > TELEGRAM_MAX / 2,
        "pieces are reasonably full: {used}"
    );
}

#[test]
fn falls_back_to_line_breaks_then_spaces() {
    let lines: Vec<String> = (0..400).map(|i| format!("line {i} of text")).collect();
    let text = lines.join("\n");
    let pieces = strip_counters(&split_markdown(&text, 1000));
    for piece in &pieces {
        for line in piece.lines() {
            assert!(lines.contains(&line.to_owned()), "cut in {line:?}");
        }
    }
    let sentence = joined((0..800).map(|i| format!("w{i}")), " ");
    let pieces = strip_counters(&split_markdown(&sentence, 1000));
    assert!(pieces.len() > 3);
    assert_eq!(
        words(&pieces.join(" ")),
        words(&sentence),
        "cut only at spaces"
    );
}

#[test]
fn a_long_code_block_splits_in_three_with_fences_repaired() {
    let lines = lines_until(9_000, |n| {
        format!("let v{n} = f({n}) < limit && ok; // #{n}")
    });
    let text = format!("Here:\n\n```rust\n{}\n```\n\nDone.", lines.join("\n"));
    let pieces = split_markdown(&text, TELEGRAM_MAX);
    assert_eq!(pieces.len(), 3, "{} chars of code", text.len());
    assert_pieces_fit(&pieces, TELEGRAM_MAX);
    let bodies = strip_counters(&pieces);
    assert!(bodies[0].starts_with("Here:\n\n```rust\n") && bodies[0].ends_with("\n```"));
    assert!(bodies[1].starts_with("```rust\n") && bodies[1].ends_with("\n```"));
    assert!(bodies[2].starts_with("```rust\n") && bodies[2].ends_with("\n```\n\nDone."));
    for piece in &pieces {
        let html = to_telegram_html(piece);
        assert_eq!(
            html.matches("<pre><code class=\"language-rust\">").count(),
            1
        );
        assert!(html.contains("&lt; limit &amp;&amp; ok"));
    }
    let code = bodies
        .iter()
        .flat_map(|body| body.lines())
        .filter(|l| l.starts_with("let "));
    assert!(
        code.eq(lines.iter().map(String::as_str)),
        "every line once, in order"
    );
}

#[test]
fn fences_reopen_with_their_own_markers() {
    let body = joined((0..300).map(|i| format!("row {i}")), "\n");
    for (open, close) in [
        ("~~~py extra", "~~~"),
        ("````md", "````"),
        ("  ```", "  ```"),
    ] {
        let text = format!("{open}\n{body}\n{close}");
        let pieces = strip_counters(&split_markdown(&text, 500));
        assert!(pieces.len() > 2);
        for piece in &pieces {
            let (head, tail) = (format!("{open}\n"), format!("\n{close}"));
            assert!(
                piece.starts_with(&head) && piece.ends_with(&tail),
                "{piece:?}"
            );
        }
    }
}

#[test]
fn an_unclosed_fence_is_closed_in_every_piece() {
    let text = format!("```\n{}", "some code here\n".repeat(200));
    let pieces = strip_counters(&split_markdown(&text, 1000));
    assert!(pieces.len() >= 3);
    let closed = |piece: &String| piece.starts_with("```\n") && piece.ends_with("\n```");
    assert!(pieces.iter().all(closed));
}

#[test]
fn a_long_table_repeats_its_header() {
    let rows = joined((0..200).map(|i| format!("| item {i} | {} |", i * 7)), "\n");
    let text = format!("| Name | Value |\n|---|--:|\n{rows}");
    let pieces = split_markdown(&text, 1000);
    assert!(pieces.len() > 3);
    assert_pieces_fit(&pieces, 1000);
    assert!(
        pieces
            .iter()
            .all(|piece| to_telegram_html(piece).starts_with("<pre>Name "))
    );
}

#[test]
fn a_five_thousand_char_word_is_cut_hard() {
    let word = "x".repeat(5_000);
    let pieces = split_markdown(&word, TELEGRAM_MAX);
    assert_pieces_fit(&pieces, TELEGRAM_MAX);
    let bodies = strip_counters(&pieces);
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[0].len(),
        TELEGRAM_MAX - "\n\n(1/2)".len(),
        "the first is full"
    );
    assert_eq!(bodies.concat(), word);
}

#[test]
fn three_thousand_emoji_keep_their_surrogate_pairs() {
    let emoji = "😀".repeat(3_000);
    let pieces = split_markdown(&emoji, TELEGRAM_MAX);
    assert_pieces_fit(&pieces, TELEGRAM_MAX);
    let bodies = strip_counters(&pieces);
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0].chars().count(), (TELEGRAM_MAX - 7) / 2);
    for body in &bodies {
        let units: Vec<u16> = body.encode_utf16().collect();
        assert_eq!(String::from_utf16(&units).ok().as_ref(), Some(body));
        assert!(body.chars().all(|c| c == '😀'));
    }
    assert_eq!(bodies.concat(), emoji);
}

#[test]
fn non_bmp_text_is_measured_in_utf16() {
    let text = "𝄞𝄞𝄞𝄞 ".repeat(1_000);
    let pieces = split_markdown(&text, TELEGRAM_MAX);
    assert_eq!(
        pieces.len(),
        3,
        "9,000 units need three pieces; 5,000 chars would not"
    );
    assert_pieces_fit(&pieces, TELEGRAM_MAX);
}

#[test]
fn the_rendering_is_measured_not_the_source() {
    let list = "1. x\n".repeat(30);
    assert!(
        utf16_len(&list) <= 150 && to_plain_text(&list).len() > 150,
        "renumbered"
    );
    let pieces = split_markdown(&list, 150);
    assert!(pieces.len() > 1);
    assert_pieces_fit(&pieces, 150);
    let table = format!(
        "|a|b|\n|-|-|\n|{}|x|\n{}",
        "long ".repeat(6),
        "|y|z|\n".repeat(20)
    );
    assert!(
        utf16_len(&table) <= 200 && to_plain_text(&table).len() > 200,
        "padded"
    );
    assert_pieces_fit(&split_markdown(&table, 200), 200);
}

#[test]
fn inline_code_spans_are_not_cut_when_avoidable() {
    let line = joined((0..300).map(|i| format!("see `code span {i}` here")), " ");
    for piece in strip_counters(&split_markdown(&line, 700)) {
        assert_eq!(piece.matches('`').count() % 2, 0, "{piece:?}");
    }
}

#[test]
fn tiny_limits_still_terminate_and_progress() {
    let text = "😀 word ```x\ncode\n``` more";
    for limit in [0, 1, 2, 5, 10] {
        let pieces = split_markdown(text, limit);
        assert!(!pieces.is_empty() && pieces.len() <= text.len());
        assert!(
            pieces.iter().all(|piece| !piece.contains("(1/")),
            "no counter"
        );
    }
}

#[test]
fn cuts_avoid_starting_a_piece_with_an_indented_line() {
    let item = |i| format!("- top {i}\n  - mid {i}\n    - deep {i} with a few more words\n");
    let list = joined((0..100).map(item), "");
    let pieces = split_markdown(&list, 300);
    assert!(pieces.len() > 10);
    for piece in &pieces {
        assert!(
            !piece.starts_with("    "),
            "would render as code: {piece:?}"
        );
        assert!(!to_telegram_html(piece).contains("<pre>"), "{piece:?}");
    }
}

#[test]
fn counters_grow_a_digit_when_needed() {
    let text = "word ".repeat(1_000);
    let pieces = split_markdown(&text, 100);
    assert!(pieces.len() > 9);
    assert_pieces_fit(&pieces, 100);
    assert_eq!(words(&strip_counters(&pieces).join(" ")), words(&text));
}

/// Random documents whose every word is a unique token `tN`, so a test can
/// check that no word is lost, duplicated out of order, or cut in two.
struct DocGen {
    rng: XorShift,
    tokens: usize,
}

impl DocGen {
    fn words(&mut self, max: usize) -> String {
        let count = 1 + self.rng.below(max);
        let token = |_| {
            self.tokens += 1;
            format!("t{}", self.tokens)
        };
        joined((0..count).map(token), " ")
    }

    fn lines(&mut self, max: usize, line: impl Fn(&mut Self) -> String) -> String {
        let count = 1 + self.rng.below(max);
        joined((0..count).map(|_| line(self)), "\n")
    }

    fn block(&mut self) -> String {
        match self.rng.below(9) {
            0 | 1 => self.words(120),
            2 => {
                let (b, i, l) = (self.words(3), self.words(2), self.words(2));
                let hostile = "<script>x</script> [j](javascript:alert(1)) ![i](https://i.io)";
                format!(
                    "**{b}** *{i}* `a < b && c` [{l}](https://x.io/?q=1&r=2) 😀 &amp; {hostile}"
                )
            }
            3 => format!(
                "```rust\n{}\n```",
                self.lines(40, |g| format!("if a<b {{ {} }}", g.words(5)))
            ),
            4 => self.lines(12, |g| {
                format!("{}- {} 😀", "  ".repeat(g.rng.below(3)), g.words(6))
            }),
            5 => self.lines(8, |g| format!("{}. {}", 1 + g.rng.below(20), g.words(8))),
            6 => format!("> {}\n> {}", self.words(10), self.words(10)),
            7 => format!("## {}", self.words(4)),
            _ => format!(
                "| h1 | h2 |\n|---|:-:|\n{}",
                self.lines(15, |g| format!("| {} | {} |", g.words(2), g.words(1)))
            ),
        }
    }

    fn document(&mut self) -> String {
        let count = 3 + self.rng.below(25);
        joined((0..count).map(|_| self.block()), "\n\n")
    }
}

/// The `tN` tokens of `text` in order, each kept at its first appearance.
fn first_tokens(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let tokens = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            w.len() > 1 && w.starts_with('t') && w[1..].bytes().all(|b| b.is_ascii_digit())
        });
    tokens
        .filter(|token| seen.insert(token.to_string()))
        .map(str::to_owned)
        .collect()
}

#[test]
fn random_documents_split_into_well_formed_pieces() {
    let mut generator = DocGen {
        rng: XorShift(0x9E37_79B9_7F4A_7C15),
        tokens: 0,
    };
    let mut splits = 0;
    for _ in 0..80 {
        let document = generator.document();
        let limit = 120 + generator.rng.below(1_400);
        let pieces = split_markdown(&document, limit);
        assert_pieces_fit(&pieces, limit);
        assert!(check_telegram_html(&to_telegram_html(&document)).is_ok());
        if pieces.len() > 1 {
            splits += 1;
            strip_counters(&pieces);
        }
        assert_eq!(
            first_tokens(&pieces.join("\n")),
            first_tokens(&document),
            "words kept, in order"
        );
    }
    assert!(splits > 40, "most documents needed splitting: {splits}");
}
