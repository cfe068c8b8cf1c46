//! The search benchmark (ignored; run with
//! `cargo test --release -- --ignored --nocapture search_benchmark`): 1,000 sessions × 100
//! messages of English-like prose with words drawn by Zipf frequency, 20 queries run twice,
//! median and p95 of the second pass, and the database size on disk.

use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, params};

use super::super::{SearchQuery, search};
use super::migrate;

/// Common English words, most frequent first (a hand-written approximation).
const COMMON: &str = "the of and to a in is it you that he was for on are with as I his they be at \
one have this from or had by not word but what some we can out other were all there when up use \
your how said an each she which do their time if will way about many then them write would like \
so these her long make thing see him two has look more day could go come did number sound no most \
people my over know water than call first who may down side been now find any new work part take \
get place made live where after back little only round man year came show every good me give our \
under name very through just form sentence great think say help low line differ turn cause much \
mean before move right boy old too same tell does set three want air well also play small end put \
home read hand port large spell add even land here must big high such follow act why ask men \
change went light kind off need house picture try us again animal point mother world near build \
self earth father head stand own page should country found answer school grow study still learn \
plant cover food sun four between state keep eye never last let thought city tree cross farm hard \
start might story saw far sea draw left late run while press close night real life few north open \
seem together next white children begin got walk example ease paper group always music those both \
mark often letter until mile river car feet care second book carry took science eat room friend \
began idea fish mountain stop once base hear horse cut sure watch color face wood main enough \
plain girl usual young ready above ever red list though feel talk bird soon body dog family direct \
pose leave song measure door product black short numeral class wind question happen complete ship \
area half rock order fire south problem piece told knew pass since top whole king space heard best \
hour better true during hundred five remember step early hold west ground interest reach fast verb \
sing listen six table travel less morning ten simple several vowel toward war lay against pattern \
slow center love person money serve appear road map rain rule govern pull cold notice voice unit \
power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field \
rest correct able pound done beauty drive stood contain front teach week final gave green oh quick \
develop ocean warm free minute strong special mind behind clear tail produce fact street inch \
multiply nothing course stay wheel full force blue object decide surface deep moon island foot \
system busy test record boat common gold possible plane stead dry wonder laugh thousand ago ran \
check game shape equate hot miss brought heat snow tire bring yes distant fill east paint language \
among grand ball yet wave drop heart am present heavy dance engine position arm wide sail material \
size vary settle speak weight general ice matter circle pair include divide syllable felt perhaps \
pick sudden count square reason length represent art subject region energy hunt probable bed \
brother egg ride cell believe fraction forest sit race window store summer train sleep prove lone \
leg exercise wall catch mount wish sky board joy winter sat written wild instrument kept glass \
grass cow job edge sign visit past soft fun bright gas weather month million bear finish happy \
hope flower clothe strange gone jump baby eight village meet root buy raise solve metal whether \
push seven paragraph third shall held hair describe cook floor either result burn hill safe cat \
century consider type law bit coast copy phrase silent tall sand soil roll temperature finger \
industry value fight lie beat excite natural view sense ear else quite broke case middle kill son \
lake moment scale loud spring observe child straight consonant nation dictionary milk speed method \
organ pay age section dress cloud surprise quiet stone tiny climb cool design poor lot experiment \
bottom key iron single stick flat twenty skin smile crease hole trade melody trip office receive \
row mouth exact symbol die least trouble shout except wrote seed tone join suggest clean break lady \
yard rise bad blow oil blood touch grew cent mix team wire cost lost brown wear garden equal sent \
choose fell fit flow fair bank collect save control decimal gentle woman captain practice separate \
difficult doctor please protect noon whose locate ring character insect caught period indicate \
radio spoke atom human history effect electric expect crop modern element hit student corner party \
supply bone rail imagine provide agree thus capital chair danger fruit rich thick soldier process \
operate guess necessary sharp wing create neighbor wash bat rather crowd corn compare poem string \
bell depend meat rub tube famous dollar stream fear sight thin triangle planet hurry chief colony \
clock mine tie enter major fresh search send yellow gun allow print dead spot desert suit current \
lift rose continue block chart hat sell success company subtract event particular deal swim term \
opposite wife shoe shoulder spread arrange camp invent cotton born determine quart nine truck noise \
level chance gather shop stretch throw shine property column molecule select wrong gray repeat \
require broad prepare salt nose plural anger claim continent oxygen sugar death pretty skill women \
season solution magnet silver thank branch match suffix especially fig afraid huge sister steel \
discuss forward similar guide experience score apple bought led pitch coat mass card band rope slip \
win dream evening condition feed tool total basic smell valley nor double seat arrive master track \
parent shore division sheet substance favor connect post spend chord fat glad original share \
station dad bread charge proper bar offer segment slave duck instant market degree populate chick \
dear enemy reply drink occur support speech nature range steam motion path liquid log meant \
quotient teeth shell neck";

/// Vocabulary size: the common words, then made-up rarer words.
const VOCABULARY: usize = 30_000;
const SESSIONS: usize = 1_000;
const MESSAGES_PER_SESSION: usize = 100;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A made-up word for rank `rank` (deterministic, pronounceable, unique per rank).
fn made_up_word(rank: usize) -> String {
    const ONSETS: [&str; 16] = [
        "b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br",
    ];
    const VOWELS: [&str; 5] = ["a", "e", "i", "o", "u"];
    let mut n = rank;
    let mut word = String::new();
    for _ in 0..3 {
        word.push_str(ONSETS[n % 16]);
        n /= 16;
        word.push_str(VOWELS[n % 5]);
        n /= 5;
    }
    word.push_str(ONSETS[n % 16]);
    word
}

fn vocabulary() -> Vec<String> {
    let mut words: Vec<String> = COMMON.split_whitespace().map(str::to_string).collect();
    let mut rank = 0;
    while words.len() < VOCABULARY {
        words.push(made_up_word(rank));
        rank += 1;
    }
    words
}

/// Cumulative Zipf (s = 1) weights over the vocabulary.
fn zipf_cdf(n: usize) -> Vec<f64> {
    let mut total = 0.0;
    let mut cdf: Vec<f64> = (1..=n)
        .map(|rank| {
            total += 1.0 / rank as f64;
            total
        })
        .collect();
    for value in &mut cdf {
        *value /= total;
    }
    cdf
}

fn sentence_text(rng: &mut Rng, words: &[String], cdf: &[f64]) -> String {
    let count = 20 + (rng.next() % 41) as usize;
    let mut text = String::with_capacity(count * 7);
    for i in 0..count {
        let r = rng.unit();
        let word = &words[cdf.partition_point(|&c| c < r).min(words.len() - 1)];
        if i > 0 {
            text.push(' ');
        }
        text.push_str(word);
        if i % 11 == 10 || i + 1 == count {
            text.push('.');
        }
    }
    text
}

fn build(conn: &Connection) -> f64 {
    conn.execute_batch(
        "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
    )
    .unwrap();
    migrate(conn);
    let words = vocabulary();
    let cdf = zipf_cdf(words.len());
    let mut rng = Rng(42);
    let mut chars = 0usize;
    conn.execute_batch("BEGIN").unwrap();
    let mut at = 1_700_000_000_000i64;
    for s in 0..SESSIONS {
        let id = format!("20250101_000000_{s:06}");
        let continues = s % 5 == 4;
        conn.execute(
            "INSERT INTO sessions (id, source, title, lineage, parent_session_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            params![
                id,
                if s % 7 == 0 { "telegram" } else { "cli" },
                format!("Session {s}"),
                if continues { "compression" } else { "root" },
                continues.then(|| format!("20250101_000000_{:06}", s - 1)),
                at
            ],
        )
        .unwrap();
        if continues {
            conn.execute(
                "UPDATE sessions SET continued_by = ?1 WHERE id = ?2",
                params![id, format!("20250101_000000_{:06}", s - 1)],
            )
            .unwrap();
        }
        let mut insert = conn
            .prepare_cached(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?1, ?2, ?3, ?4)",
            )
            .unwrap();
        for m in 0..MESSAGES_PER_SESSION {
            let text = sentence_text(&mut rng, &words, &cdf);
            chars += text.len();
            at += 1_000;
            let role = if m % 2 == 0 { "user" } else { "assistant" };
            insert.execute(params![id, role, text, at]).unwrap();
        }
    }
    conn.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    chars as f64 / (SESSIONS * MESSAGES_PER_SESSION) as f64
}

/// The 20 benchmark queries; `rare(n)` is the word of vocabulary rank `n`.
fn queries(words: &[String]) -> Vec<String> {
    let fixed = [
        "the",
        "in",
        "be",
        "people",
        "water",
        "history",
        "molecule",
        "quotient",
        "RARE1",
        "RARE2",
        "time AND people",
        "water OR music",
        "system NOT the",
        "\"of the\"",
        "list*",
        "the people work",
        "\"in the water\"",
        "(river OR ocean) NOT the",
        "music AND bell",
        "doctor",
    ];
    fixed
        .iter()
        .map(|q| match *q {
            "RARE1" => words[10_000].clone(),
            "RARE2" => words[29_000].clone(),
            _ => q.to_string(),
        })
        .collect()
}

/// CPU time this thread has run, from the scheduler (immune to waiting for a busy CPU);
/// `None` where /proc does not offer it.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

#[test]
#[ignore = "benchmark: builds a 100,000-message database"]
fn search_benchmark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hermesd.db");
    let started = Instant::now();
    let average = build(&Connection::open(&path).unwrap());
    let size = std::fs::metadata(&path).unwrap().len();
    println!(
        "built {} messages (avg {average:.0} chars) in {:.1?}; database {:.1} MiB",
        SESSIONS * MESSAGES_PER_SESSION,
        started.elapsed(),
        size as f64 / (1024.0 * 1024.0)
    );
    // A reader like the daemon's: read-only, no SQL functions registered.
    let reader = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    if let Ok(pragmas) = std::env::var("BENCH_PRAGMAS") {
        reader.execute_batch(&pragmas).unwrap();
    }
    let mut timings = Vec::new();
    let queries = queries(&vocabulary());
    for pass in 0..2 {
        timings.clear();
        for text in &queries {
            let query = SearchQuery {
                text: text.clone(),
                limit: 20,
                ..SearchQuery::default()
            };
            let start = Instant::now();
            let hits = search(&reader, &query).unwrap();
            let took = start.elapsed();
            timings.push(took);
            if pass == 1 {
                println!("{took:>10.2?}  {:>2} hits  {text}", hits.len());
            }
        }
    }
    timings.sort();
    let median = (timings[9] + timings[10]) / 2;
    let p95 = percentile(&timings, 0.95);
    println!("second pass: median {median:.2?}, p95 {p95:.2?}");
    assert!(median < Duration::from_millis(2), "median {median:?}");
    assert!(p95 < Duration::from_millis(10), "p95 {p95:?}");
}

#[test]
#[ignore = "probe"]
fn profile() {
    let path = std::path::Path::new("/tmp/searchbench.db");
    if !path.exists() {
        build(&Connection::open(path).unwrap());
    }
    let reader = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    if let Ok(pragmas) = std::env::var("BENCH_PRAGMAS") {
        reader.execute_batch(&pragmas).unwrap();
    }
    let mut queries = queries(&vocabulary());
    if let Ok(only) = std::env::var("QUERY_ONLY") {
        queries = vec![only; 1];
    }
    let mut mins = Vec::new();
    for text in &queries {
        let query = SearchQuery {
            text: text.clone(),
            limit: 20,
            ..SearchQuery::default()
        };
        search(&reader, &query).unwrap();
        let reps: u32 = std::env::var("PROFILE_REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(40);
        let cpu = thread_cpu().unwrap();
        let wall = Instant::now();
        for _ in 0..reps {
            search(&reader, &query).unwrap();
        }
        let cpu = (thread_cpu().unwrap() - cpu) / reps;
        let wall = wall.elapsed() / reps;
        println!("P cpu {cpu:>10.2?} wall {wall:>10.2?}  {text}");
        mins.push(cpu);
    }
    mins.sort();
    if mins.len() < 20 {
        return;
    }
    println!(
        "P median-of-medians {:.2?} p95 {:.2?}",
        (mins[9] + mins[10]) / 2,
        mins[18]
    );
}

#[test]
#[ignore = "probe"]
fn probe() {
    let path = std::path::Path::new("/tmp/searchbench.db");
    let reader = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    for term in [
        "\"the\" AND \"people\" AND \"work\"",
        "\"people\" AND \"work\"",
        "\"in the water\"",
        "\"water\"",
        "\"the\"",
    ] {
        let ops: Vec<(&str, String)> = vec![
            (
                "desc 1000",
                format!(
                    "SELECT rowid FROM messages_fts WHERE messages_fts MATCH '{term}' ORDER BY rowid DESC LIMIT 1000"
                ),
            ),
            (
                "asc 1000",
                format!(
                    "SELECT rowid FROM messages_fts WHERE messages_fts MATCH '{term}' LIMIT 1000"
                ),
            ),
            (
                "count",
                format!("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '{term}'"),
            ),
            (
                "gc desc",
                format!(
                    "SELECT group_concat(rowid) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH '{term}' ORDER BY rowid DESC LIMIT 1000)"
                ),
            ),
        ];
        for (name, sql) in &ops {
            let mut st = reader.prepare_cached(sql).unwrap();
            let mut times = Vec::new();
            let mut n = 0;
            for _ in 0..9 {
                let t = Instant::now();
                let v: Vec<rusqlite::types::Value> = st
                    .query_map([], |r| r.get(0))
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                times.push(t.elapsed());
                n = v.len();
            }
            times.sort();
            println!("op {term} {name}: min {:.2?} rows {n}", times[0]);
        }
    }
}
