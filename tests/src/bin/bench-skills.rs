//! Skills benchmark: 500 generated skills (SKILL.md ~3 KB and two reference files each).
//! Prints a table: the catalog load, the index, the library's view at a daemon's first start
//! (every skill new: digested and scanned) and at a later start (records known: stat only), an
//! unchanged view (what each new session pays), and the scan of a 100 KiB SKILL.md.
//!
//! `cargo run --release -p hermes-tests --bin bench-skills [-- RUNS]` (RUNS: samples of each
//! timing, the median reported; default 15).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary fails by panicking

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use hermesd::{
    skills::{
        ActivationContext, Catalog, SkillsLibrary, build_index, current_os,
        fingerprint::stat_fingerprint, scan,
    },
    store::Store,
};

const SKILLS: usize = 500;
const RUNS: usize = 15;

fn skill_md(i: usize) -> String {
    let mut text = format!(
        "---\nname: skill-{i:03}\ndescription: \"Generated skill number {i} for the benchmark.\"\n\
         version: 1.0.{i}\nplatforms: [linux, macos]\nmetadata:\n  hermes:\n    tags: [bench, automation]\n\
         ---\n# Skill {i}\n\n"
    );
    let mut step = 1;
    while text.len() < 3000 {
        text.push_str(&format!(
            "{step}. Run `tool --flag {step}` and check the output for errors before going on.\n"
        ));
        step += 1;
    }
    text
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create a bench directory");
    }
    std::fs::write(path, text).expect("write a bench file");
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn timed<T>(work: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    drop(work());
    start.elapsed()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `--later ROOT DB`: one library view in a fresh process, as a daemon start does; prints ms.
fn later_start(root: &str, db: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let store = Store::open(Path::new(db)).expect("open the store");
        let library = SkillsLibrary::default();
        let started = Instant::now();
        library
            .view(&store, vec![PathBuf::from(root)])
            .await
            .expect("view");
        println!("{}", started.elapsed().as_secs_f64() * 1000.0);
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "--later" {
        later_start(&args[2], &args[3]);
        return;
    }
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let root = tmp.path().join("skills");
    let reference = "Reference material line with some detail.\n".repeat(50);
    for i in 0..SKILLS {
        let dir = root.join(format!("cat-{:02}/skill-{i:03}", i % 20));
        write(&dir.join("SKILL.md"), &skill_md(i));
        write(&dir.join("references/api.md"), &reference);
        write(&dir.join("references/examples.md"), &reference);
    }
    let runs: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(RUNS)
        .max(1);
    let roots: Vec<PathBuf> = vec![root];
    let load = median((0..runs).map(|_| timed(|| Catalog::load(&roots))).collect());
    let catalog = Catalog::load(&roots);
    assert_eq!(catalog.entries.len(), SKILLS);
    let tools: HashSet<String> = ["skill_view".to_string()].into();
    let nothing = std::collections::HashMap::new();
    let activation = ActivationContext {
        os: current_os(),
        platform: Some("cli"),
        available_tools: &tools,
        available_toolsets: &tools,
        disabled: &[],
        platform_disabled: &nothing,
    };
    let index = median(
        (0..runs)
            .map(|_| timed(|| build_index(&catalog, &activation)))
            .collect(),
    );

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let signature = median(
        (0..runs)
            .map(|_| timed(|| Catalog::signature(&roots)))
            .collect(),
    );
    let fingerprints = median(
        (0..runs)
            .map(|_| {
                timed(|| {
                    catalog
                        .entries
                        .iter()
                        .map(|e| stat_fingerprint(&e.dir).len())
                        .sum::<usize>()
                })
            })
            .collect(),
    );
    let watch = median(
        (0..runs)
            .map(|_| timed(|| hermesd::skills::watch::RootsWatch::start(&roots)))
            .collect(),
    );
    let (first, later, unchanged, records) = runtime.block_on(async {
        let store = Store::open(&tmp.path().join("hermesd.db")).expect("open the store");
        let first_library = SkillsLibrary::default();
        let started = Instant::now();
        let view = first_library
            .view(&store, roots.clone())
            .await
            .expect("first view");
        let first = started.elapsed();
        // The bundled skills are synced into the root too.
        assert!(view.visible.entries.len() >= SKILLS);
        // A later start, each in its own process (as the daemon starts).
        let me = std::env::current_exe().expect("the bench's own path");
        let mut later = Vec::new();
        for _ in 0..runs {
            let out = std::process::Command::new(&me)
                .arg("--later")
                .arg(&roots[0])
                .arg(tmp.path().join("hermesd.db"))
                .output()
                .expect("run the later-start probe");
            let ms: f64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .expect("the probe prints milliseconds");
            later.push(Duration::from_secs_f64(ms / 1000.0));
        }
        let mut unchanged = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            first_library
                .view(&store, roots.clone())
                .await
                .expect("view");
            unchanged.push(started.elapsed());
        }
        let mut records = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            store
                .read(hermesd::store::skill_records)
                .await
                .expect("records");
            records.push(started.elapsed());
        }
        (first, median(later), median(unchanged), median(records))
    });

    let mut big = String::new();
    while big.len() < 100 * 1024 {
        big.push_str(&skill_md(big.len()));
        big.push_str("curl -fsSL https://x.example/i.sh -o i.sh && less i.sh\n");
    }
    scan::precompile().expect("the scan rules compile");
    let scan_time = median(
        (0..runs)
            .map(|_| timed(|| scan::scan_text("SKILL.md", &big)))
            .collect(),
    );

    println!("| measurement ({SKILLS} skills, median of {runs}) | time |");
    println!("|---|---|");
    println!("| Catalog::load | {} |", ms(load));
    println!("| build_index | {} |", ms(index));
    println!("| Catalog::signature | {} |", ms(signature));
    println!(
        "| stat fingerprints of every skill | {} |",
        ms(fingerprints)
    );
    println!("| reading the skill records | {} |", ms(records));
    println!("| setting up the inotify watch | {} |", ms(watch));
    println!(
        "| library view, first start (every skill digested and scanned, once) | {} |",
        ms(first)
    );
    println!(
        "| library view, later start (records known: load + stat) | {} |",
        ms(later)
    );
    println!(
        "| library view, nothing changed (each new session) | {} |",
        ms(unchanged)
    );
    println!(
        "| scan of a {} KiB SKILL.md | {} |",
        big.len() / 1024,
        ms(scan_time)
    );
}
