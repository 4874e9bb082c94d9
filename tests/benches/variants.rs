//! `just bench-variants` / `cargo bench --bench variants`: every variant kind
//! on the bundled demo (451 questions, real images; goal < 2 s), each kind
//! alone, and noise-PNG throughput (goal ≥ 50 MPixel/s on this machine's
//! threads). Prints figures; asserts nothing (speed is measured here, never
//! in tests).

#[path = "support.rs"]
mod support;

use support::best_of;

use blindspot::spec::Pipeline;
use blindspot::variants::{Kind, KindSel, VariantsConfig, expand_kinds, generate, null::noise_png};
use rayon::prelude::*;

fn main() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let p = Pipeline::load(&root.join("pipelines/vqa-rad.toml")).expect("the demo pipeline loads");
    let samples = blindspot::ingest::ingest(&p.ingest).expect("the demo ingests").samples;
    let threads = rayon::current_num_threads();
    let all = VariantsConfig::default();
    let (secs, v) = best_of(3, || generate(&samples, &all).expect("variants"));
    let rows: usize = v.kinds.iter().map(|k| k.rows.len()).sum();
    let mpix: f64 = v
        .get(Kind::NoiseImage)
        .map(|k| {
            k.rows
                .iter()
                .flat_map(|r| &r.images)
                .map(|i| i.width.unwrap_or(0) as f64 * i.height.unwrap_or(0) as f64)
                .sum()
        })
        .unwrap_or(0.0)
        / 1e6;
    println!(
        "all {} kinds on the demo ({} questions, {rows} rows, {mpix:.0} MPixel of noise), {threads} threads: {secs:.2} s (goal < 2 s)",
        v.kinds.len(),
        samples.len()
    );
    drop(v);
    for kind in expand_kinds(&KindSel::all(), &samples) {
        let one = VariantsConfig { kinds: vec![KindSel::One(kind)], ..Default::default() };
        let (secs, v) = best_of(3, || generate(&samples, &one).expect("variants"));
        let mut line = format!("  {:<22} {:>5} rows {:>8.1} ms", kind.name(), v.kinds[0].rows.len(), secs * 1e3);
        if kind == Kind::NoiseImage {
            line.push_str(&format!("  ({:.0} MPixel/s with sha256 and row building)", mpix / secs));
        }
        println!("{line}");
    }

    // Noise PNGs alone: 64 images of 1024 x 1024, in parallel as generate() does.
    let (w, h, n) = (1024u32, 1024u32, 64u64);
    let (secs, bytes) = best_of(3, || (0..n).into_par_iter().map(|seed| noise_png(w, h, seed).len()).sum::<usize>());
    let mp = (w as f64 * h as f64 * n as f64) / 1e6;
    println!(
        "noise PNG, {n} x {w}x{h} RGB ({:.0} MB), {threads} threads: {:.0} MPixel/s (goal >= 50)",
        bytes as f64 / 1e6,
        mp / secs
    );
    let (secs, _) = best_of(3, || noise_png(w, h, 1).len());
    println!("noise PNG, one {w}x{h} image on one thread: {:.0} MPixel/s", w as f64 * h as f64 / 1e6 / secs);
}
