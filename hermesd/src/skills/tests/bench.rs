//! Load-time benchmark on 500 generated skills. Run with
//! `cargo test --release -- --ignored --nocapture catalog_load_bench`.

use std::time::{Duration, Instant};

use super::super::catalog::Catalog;
use super::super::index::build_index;
use super::fixture::{Ctx, write};

const SKILLS: usize = 500;
const CATEGORIES: usize = 20;

fn skill_md(i: usize) -> String {
    let mut text = format!(
        "---\nname: skill-{i:03}\ndescription: \"Generated skill number {i} for the load benchmark.\"\n\
version: 1.0.{i}\nplatforms: [linux, macos]\nmetadata:\n  hermes:\n    tags: [bench, gen-{}, automation]\n\
    related_skills: [skill-{:03}]\n---\n# Skill {i}\n\n",
        i % 7,
        (i + 1) % SKILLS
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

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

#[test]
#[ignore = "benchmark; run explicitly in release mode"]
fn catalog_load_bench() {
    let tmp = tempfile::TempDir::new().unwrap();
    let root = tmp.path().join("skills");
    let reference = "Reference material line with some detail.\n".repeat(50);
    for i in 0..SKILLS {
        let dir = format!("cat-{:02}/skill-{i:03}", i % CATEGORIES);
        write(&root, &format!("{dir}/SKILL.md"), skill_md(i));
        write(&root, &format!("{dir}/references/api.md"), &reference);
        write(&root, &format!("{dir}/references/examples.md"), &reference);
    }
    let roots = vec![root];
    let warm = Catalog::load(&roots);
    assert_eq!(warm.entries.len(), SKILLS);
    assert!(warm.problems.is_empty());

    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let load = median((0..runs).map(|_| timed(|| Catalog::load(&roots))).collect());
    let signature = median(
        (0..runs)
            .map(|_| timed(|| Catalog::signature(&roots)))
            .collect(),
    );
    let with_digests = median(
        (0..runs)
            .map(|_| {
                timed(|| {
                    let catalog = Catalog::load(&roots);
                    let total: usize = catalog.entries.iter().map(|e| e.digest().len()).sum();
                    assert_eq!(total, 64 * SKILLS);
                })
            })
            .collect(),
    );
    let ctx = Ctx::new(&[], &[]);
    let index = median(
        (0..runs)
            .map(|_| timed(|| build_index(&warm, &ctx.on("linux", None))))
            .collect(),
    );
    println!(
        "{SKILLS} skills (SKILL.md ~3 KB + 2 x {} B references): Catalog::load median {load:?}, \
         load + every digest median {with_digests:?}, Catalog::signature median {signature:?}, build_index median {index:?} ({runs} runs, warm page cache)",
        reference.len()
    );
}

fn timed<T>(work: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    let result = work();
    let elapsed = start.elapsed();
    drop(result);
    elapsed
}
