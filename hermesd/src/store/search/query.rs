//! The search query language: words, "phrases", `prefix*`, AND / OR / NOT and parentheses,
//! parsed into a small expression tree. Strict mode explains what is wrong; lenient mode (the
//! model's tool) drops what it cannot use.

/// Longest query accepted, in bytes (lenient mode cuts longer text instead).
pub const MAX_QUERY_BYTES: usize = 4096;
/// Deepest nesting of parentheses accepted.
const MAX_DEPTH: usize = 32;

/// A word or phrase to look for; `prefix` matches any word starting with its last word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Term {
    pub text: String,
    pub prefix: bool,
}

impl Term {
    /// Whether the tokenizer finds any word in it (punctuation alone finds nothing).
    fn has_words(&self) -> bool {
        self.text.chars().any(char::is_alphanumeric)
    }
}

/// A parsed query. `Not(a, b)` is "a without b" (FTS5 has no unary NOT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expr {
    Term(Term),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Term(Term),
    And,
    Or,
    Not,
    Open,
    Close,
}

impl Token {
    fn is_operator(&self) -> bool {
        matches!(self, Self::And | Self::Or | Self::Not)
    }

    fn describe(&self) -> &'static str {
        match self {
            Self::And => "AND",
            Self::Or => "OR",
            Self::Not => "NOT",
            Self::Open => "(",
            Self::Close => ")",
            Self::Term(_) => "a term",
        }
    }
}

/// Parse `text` strictly: any problem FTS5 would reject is an error message for the user.
pub(super) fn parse_strict(text: &str) -> Result<Expr, String> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(format!(
            "search query is too long ({} bytes, at most {MAX_QUERY_BYTES})",
            text.len()
        ));
    }
    if text.trim().is_empty() {
        return Err("empty search query".into());
    }
    let tokens = lex(text, false)?;
    let expr = Parser { tokens, pos: 0 }.parse()?;
    prune(expr).ok_or_else(|| format!("search query has no words to search for: {}", text.trim()))
}

/// Parse `text` forgivingly: unmatched quotes and parentheses and dangling operators are
/// dropped. `None` when nothing searchable is left.
pub(super) fn parse_lenient(text: &str) -> Option<Expr> {
    let mut end = text.len().min(MAX_QUERY_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let tokens = repair(lex(&text[..end], true).ok()?);
    if tokens.is_empty() {
        return None;
    }
    let expr = Parser { tokens, pos: 0 }.parse().ok()?;
    prune(expr)
}

/// Split the query into tokens. A `"` without its closing partner is an error, or (lenient)
/// a plain separator.
fn lex(text: &str, lenient: bool) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
        } else if c == '(' || c == ')' {
            tokens.push(if c == '(' { Token::Open } else { Token::Close });
            rest = &rest[1..];
        } else if c == '"' {
            match rest[1..].find('"') {
                Some(close) => {
                    let phrase = &rest[1..=close];
                    let after = rest[close + 2..].trim_start_matches('*');
                    let prefix = after.len() < rest.len() - close - 2;
                    tokens.push(Token::Term(Term {
                        text: phrase.to_string(),
                        prefix,
                    }));
                    rest = after;
                }
                None if lenient => rest = &rest[1..],
                None => return Err(unbalanced_quote(rest)),
            }
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '"'))
                .unwrap_or(rest.len());
            let word = &rest[..end];
            rest = &rest[end..];
            tokens.push(match word {
                "AND" => Token::And,
                "OR" => Token::Or,
                "NOT" => Token::Not,
                _ => {
                    let stem = word.trim_end_matches('*');
                    Token::Term(Term {
                        text: stem.to_string(),
                        prefix: stem.len() < word.len(),
                    })
                }
            });
        }
    }
    Ok(tokens)
}

fn unbalanced_quote(from_quote: &str) -> String {
    let shown: String = from_quote.chars().take(40).collect();
    let more = if shown.len() < from_quote.len() {
        "…"
    } else {
        ""
    };
    format!(
        "unbalanced quote in search query: {}{more}",
        shown.trim_end()
    )
}

/// Lenient mode: drop unmatched parentheses, empty groups and operators that lack an operand
/// (leading, trailing, doubled, next to a parenthesis), until the token list parses.
fn repair(mut tokens: Vec<Token>) -> Vec<Token> {
    let mut open = Vec::new();
    let mut keep = vec![true; tokens.len()];
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Open => open.push(i),
            Token::Close if open.pop().is_none() => keep[i] = false,
            _ => {}
        }
    }
    for i in open {
        keep[i] = false;
    }
    let mut kept = keep.iter();
    tokens.retain(|_| kept.next().copied().unwrap_or(false));
    loop {
        let before = tokens.len();
        let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
        for token in tokens {
            let prev = out.last();
            match (&token, prev) {
                (t, None | Some(Token::Open)) if t.is_operator() => {}
                (t, Some(p)) if t.is_operator() && p.is_operator() => {}
                (Token::Close, Some(Token::Open)) => {
                    out.pop();
                }
                (Token::Close, Some(p)) if p.is_operator() => {
                    out.pop();
                    out.push(token);
                }
                _ => out.push(token),
            }
        }
        while out.last().is_some_and(Token::is_operator) {
            out.pop();
        }
        tokens = out;
        if tokens.len() == before {
            return tokens;
        }
    }
}

/// Recursive descent; binding from tightest: NOT, AND (also implied between terms), OR.
struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn parse(mut self) -> Result<Expr, String> {
        let expr = self.or(0)?;
        match self.tokens.get(self.pos) {
            None => Ok(expr),
            Some(Token::Close) => {
                Err("unbalanced parenthesis in search query: unexpected \")\"".into())
            }
            Some(other) => Err(format!("unexpected {} in search query", other.describe())),
        }
    }

    fn or(&mut self, depth: usize) -> Result<Expr, String> {
        let mut items = vec![self.and(depth)?];
        while self.tokens.get(self.pos) == Some(&Token::Or) {
            self.pos += 1;
            items.push(self.and(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Expr::Or(items)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Expr, String> {
        let mut items = vec![self.not(depth)?];
        loop {
            match self.tokens.get(self.pos) {
                Some(Token::And) => self.pos += 1,
                Some(Token::Term(_) | Token::Open) => {}
                _ => break,
            }
            items.push(self.not(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Expr::And(items)
        })
    }

    fn not(&mut self, depth: usize) -> Result<Expr, String> {
        let mut expr = self.primary(depth)?;
        while self.tokens.get(self.pos) == Some(&Token::Not) {
            self.pos += 1;
            let excluded = self.primary(depth)?;
            expr = Expr::Not(Box::new(expr), Box::new(excluded));
        }
        Ok(expr)
    }

    fn primary(&mut self, depth: usize) -> Result<Expr, String> {
        let prev = self.pos.checked_sub(1).and_then(|i| self.tokens.get(i));
        let Some(token) = self.tokens.get(self.pos) else {
            return Err(match prev {
                Some(op) if op.is_operator() => format!(
                    "search query ends with {}, which needs a term after it",
                    op.describe()
                ),
                _ => "unbalanced parenthesis in search query: missing \")\"".into(),
            });
        };
        self.pos += 1;
        match token {
            Token::Term(term) => Ok(Expr::Term(term.clone())),
            Token::Open if depth >= MAX_DEPTH => {
                Err("search query nests parentheses too deeply".into())
            }
            Token::Open => {
                let inner = self.or(depth + 1)?;
                if self.tokens.get(self.pos) != Some(&Token::Close) {
                    return Err("unbalanced parenthesis in search query: missing \")\"".into());
                }
                self.pos += 1;
                Ok(inner)
            }
            Token::Close => Err(match prev {
                Some(Token::Open) => "empty parentheses in search query".into(),
                Some(op) if op.is_operator() => format!(
                    "{} before \")\" in search query needs a term after it",
                    op.describe()
                ),
                _ => "unbalanced parenthesis in search query: unexpected \")\"".into(),
            }),
            op => Err(match prev {
                Some(p) if p.is_operator() => format!(
                    "{} followed by {} in search query; put a term between them",
                    p.describe(),
                    op.describe()
                ),
                _ if *op == Token::Not => "search query cannot start with NOT; write \
                    \"apples NOT pears\" to find apples without pears"
                    .into(),
                _ => format!(
                    "search query cannot start with {}; it needs a term on each side",
                    op.describe()
                ),
            }),
        }
    }
}

/// Remove terms without words (FTS5 would match nothing for them): dropped from AND and OR,
/// an empty exclusion is no exclusion. `None` when nothing is left.
fn prune(expr: Expr) -> Option<Expr> {
    match expr {
        Expr::Term(term) => term.has_words().then_some(Expr::Term(term)),
        Expr::And(items) => collapse(items.into_iter().filter_map(prune).collect(), Expr::And),
        Expr::Or(items) => collapse(items.into_iter().filter_map(prune).collect(), Expr::Or),
        Expr::Not(kept, excluded) => {
            let kept = prune(*kept)?;
            Some(match prune(*excluded) {
                Some(excluded) => Expr::Not(Box::new(kept), Box::new(excluded)),
                None => kept,
            })
        }
    }
}

fn collapse(mut items: Vec<Expr>, build: fn(Vec<Expr>) -> Expr) -> Option<Expr> {
    match items.len() {
        0 => None,
        1 => items.pop(),
        _ => Some(build(items)),
    }
}
