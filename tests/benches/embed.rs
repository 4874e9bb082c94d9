//! Embedding figures (printed, never asserted), `cargo bench --bench embed`:
//! - sentences/s at max length 64, all threads: synthetic texts filling all 64
//!   tokens, and the demo's real VQA-RAD questions; the texts go to
//!   `<target>/bench-embed-*.json` so `just bench-embed-torch` times PyTorch
//!   on exactly them;
//! - ScienceQA's 4,241 questions with their options embedded (question, each
//!   option, question+options), cache off (needs BLINDSPOT_DATA_DIR);
//! - exact near-duplicate search over 100,000 embeddings (384-d, seeded
//!   random unit vectors with 1,000 planted near copies; the search is a
//!   brute-force matrix product, so its time does not depend on the data;
//!   BLINDSPOT_BENCH_SEARCH_N sets another size).
//!
//! Needs the model (`just model`, or BLINDSPOT_MODEL_DIR) for the first two.

#[path = "support.rs"]
mod support;

use std::path::PathBuf;

use blindspot::embed::minilm::MiniLm;
use blindspot::embed::{EmbedSettings, Embedder, Embeddings, dups, embed_samples};
use rand::{Rng, SeedableRng};

fn model_dir() -> PathBuf {
    std::env::var_os("BLINDSPOT_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".blindspot/models/all-MiniLM-L6-v2"))
}

fn data_dir() -> PathBuf {
    std::env::var_os("BLINDSPOT_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

fn threads() -> usize {
    rayon::current_num_threads()
}

/// Embeds `texts` (best of 3), prints the rate and writes the texts to
/// `<target>/bench-embed-<name>.json` for `just bench-embed-torch`, which
/// times PyTorch on exactly them.
fn time_texts(model: &MiniLm, name: &str, what: &str, texts: &[String]) {
    let lengths: Vec<usize> = texts.iter().map(|t| model.tokenize(t).map(|v| v.len()).unwrap_or(0)).collect();
    let mean = lengths.iter().sum::<usize>() as f64 / lengths.len().max(1) as f64;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let (secs, e) = support::best_of(3, || model.embed(&refs).expect("embed"));
    assert_eq!(e.len(), texts.len());
    let rate = texts.len() as f64 / secs;
    println!(
        "embedding throughput, {what}, max length {}, {} texts of {}-{} tokens (mean {mean:.1}), {} threads: {rate:.0} sentences/s ({secs:.2} s)",
        model.max_length(),
        texts.len(),
        lengths.iter().min().unwrap_or(&0),
        lengths.iter().max().unwrap_or(&0),
        threads(),
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    std::fs::create_dir_all(&target).expect("target dir");
    let path = target.join(format!("bench-embed-{name}.json"));
    std::fs::write(&path, serde_json::to_string(texts).expect("json")).expect("write texts");
    println!("  texts: {} (rate {rate:.1})", path.display());
}

fn throughput() {
    let Ok(model) = MiniLm::load(&model_dir(), Some(64)) else {
        println!("embedding throughput: skipped (no model at {}; run `just model`)", model_dir().display());
        return;
    };
    // 512 distinct long sentences, each well over 64 tokens, so every one is truncated to 64.
    let words = [
        "the",
        "radiograph",
        "shows",
        "a",
        "small",
        "left",
        "pleural",
        "effusion",
        "with",
        "no",
        "evidence",
        "of",
        "pneumothorax",
        "and",
        "which",
        "caption",
        "describes",
        "image",
        "best",
        "man",
        "riding",
        "horse",
        "beach",
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(64);
    let long: Vec<String> = (0..512)
        .map(|i| {
            let mut t = format!("sentence {i}:");
            for _ in 0..80 {
                t.push(' ');
                t.push_str(words[rng.random_range(0..words.len())]);
            }
            t
        })
        .collect();
    time_texts(&model, "long", "synthetic sentences filling all 64 tokens", &long);
    // Real benchmark questions: the bundled demo's 2,248 VQA-RAD questions, unique.
    let json = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/vqa-rad/VQA_RAD_Dataset_Public.json");
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&json).expect("read the demo data")).expect("demo json");
    let questions: Vec<String> = rows
        .iter()
        .filter_map(|r| r["question"].as_str().map(str::to_string))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    time_texts(&model, "vqa-rad", "VQA-RAD questions (unique)", &questions);
}

fn scienceqa() {
    let Ok(model) = MiniLm::load(&model_dir(), None) else {
        println!("ScienceQA embedding: skipped (no model)");
        return;
    };
    let pipeline = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pipelines/scienceqa.toml");
    let data = data_dir().canonicalize().unwrap_or_else(|_| data_dir());
    if !data.join("scienceqa").is_dir() {
        println!("ScienceQA embedding: skipped (no data at {})", data.display());
        return;
    }
    let vars = move |name: &str| (name == "BLINDSPOT_DATA_DIR").then(|| data.display().to_string());
    let p = blindspot::spec::Pipeline::load_with(&pipeline, &vars).expect("pipeline");
    let samples = blindspot::ingest::ingest(&p.ingest).expect("ingest").samples;
    let texts: usize = samples.iter().map(|s| s.options.len() + 2).sum();
    let settings = EmbedSettings { cache_dir: None };
    let (secs, e) = support::best_of(1, || embed_samples(&samples, &model, &settings).expect("embed"));
    println!(
        "ScienceQA: {} questions, {} texts (question, options, question+options; {} unique) embedded in {:.1} s, {} threads",
        e.ids.len(),
        texts,
        unique_texts(&samples),
        secs,
        threads()
    );
}

fn unique_texts(samples: &[blindspot::sample::Sample]) -> usize {
    let mut set = std::collections::BTreeSet::new();
    for s in samples {
        set.insert(s.question.clone());
        set.extend(s.options.iter().cloned());
        set.insert(blindspot::embed::question_with_options(s));
    }
    set.len()
}

fn near_duplicate_search() {
    let (n, dim) =
        (std::env::var("BLINDSPOT_BENCH_SEARCH_N").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000), 384);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(100);
    let mut data = Vec::with_capacity(n * dim);
    for i in 0..n {
        let v: Vec<f32> = if i % 100 == 99 {
            // A near copy of the previous row.
            data[(i - 1) * dim..i * dim].iter().map(|x: &f32| x + rng.random_range(-0.01..0.01)).collect()
        } else {
            (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect()
        };
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        data.extend(v.iter().map(|x| x / norm));
    }
    let e = Embeddings::new(dim, data);
    let (secs, pairs) = support::best_of(1, || dups::near_pairs(&e, dups::DEFAULT_THRESHOLD).expect("search"));
    let clusters = dups::clusters(n, pairs.iter().map(|p| (p.a, p.b)));
    println!(
        "near-duplicate search, {} x 384 (exact, all pairs): {:.1} s, {} threads; {} pairs >= {}, {} clusters",
        n,
        secs,
        threads(),
        pairs.len(),
        dups::DEFAULT_THRESHOLD,
        clusters.len()
    );
}

fn main() {
    // `cargo bench` passes --bench; a name filter picks one part.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let run = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if run("throughput") {
        throughput();
    }
    if run("scienceqa") {
        scienceqa();
    }
    if run("search") {
        near_duplicate_search();
    }
}
