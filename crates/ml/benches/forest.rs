//! `cargo bench -p blindspot-ml --bench forest [-- DIR]`: the forest on five
//! folds, side by side as `blindspot diagnose` runs them. Without DIR the folds
//! are a synthetic problem made here (20,000 rows, 40 features, 4 classes of
//! which 3 features carry the signal); with DIR, the per-fold feature matrices
//! written by `blindspot diagnose --export-features DIR` (one group folder
//! `<type>__<format>/r0_f<k>_{train,test}.parquet`). Prints the 5-fold fit +
//! predict time and the held-out accuracy (best of 3, or of N with
//! `--repeats N`), to compare with `forest_sklearn.py` and `forest_peers.py`
//! (beside this file) on exactly the same input; `forest_peers.py` calls it
//! with `--repeats 1` between peer runs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow::array::{Array, AsArray};
use arrow::datatypes::Float64Type;
use blindspot_ml::forest::{Binner, ForestParams, Matrix, fit_classifier_scored};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The allocator of the `blindspot` binary, so the forest is timed as it runs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Feature matrix and integer labels of one exported file.
fn load(path: &Path) -> (Matrix, Vec<u32>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let (mut data, mut labels, mut n_rows, mut n_cols) = (Vec::new(), Vec::new(), 0, 0);
    for batch in reader {
        let batch = batch.unwrap();
        let schema = batch.schema();
        let features: Vec<usize> = (0..batch.num_columns())
            .filter(|&j| !["id", "label", "answer"].contains(&schema.field(j).name().as_str()))
            .collect();
        n_cols = features.len();
        let label = batch.column(schema.index_of("label").unwrap()).as_primitive::<Float64Type>().clone();
        for i in 0..batch.num_rows() {
            for &j in &features {
                let c = batch.column(j).as_primitive::<Float64Type>();
                data.push(if c.is_null(i) { f64::NAN } else { c.value(i) });
            }
            labels.push(label.value(i) as u32);
        }
        n_rows += batch.num_rows();
    }
    (Matrix::new(n_rows, n_cols, data), labels)
}

/// A feature matrix and its labels.
type Labelled = (Matrix, Vec<u32>);

/// Five folds of a synthetic problem: the class is the quadrant of two features
/// shifted by a third (with 10% of labels drawn at random), beside 37 noise
/// features; about 0.9 accuracy is reachable, 0.25 is chance.
fn synthetic() -> Vec<(Labelled, Labelled)> {
    const ROWS: usize = 20_000;
    const COLS: usize = 40;
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut x = vec![0.0; ROWS * COLS];
    let mut y = vec![0u32; ROWS];
    for i in 0..ROWS {
        let row = &mut x[i * COLS..(i + 1) * COLS];
        row.iter_mut().for_each(|v| *v = rng.random::<f64>());
        let class = u32::from(row[0] + 0.2 * row[2] > 0.6) * 2 + u32::from(row[1] > 0.5);
        y[i] = if rng.random::<f64>() < 0.1 { rng.random_range(0..4) } else { class };
    }
    (0..5)
        .map(|k| {
            let pick = |held: bool| -> Labelled {
                let rows: Vec<usize> = (0..ROWS).filter(|i| (i % 5 == k) == held).collect();
                let data = rows.iter().flat_map(|&i| x[i * COLS..(i + 1) * COLS].iter().copied()).collect();
                (Matrix::new(rows.len(), COLS, data), rows.iter().map(|&i| y[i]).collect())
            };
            (pick(false), pick(true))
        })
        .collect()
}

fn main() {
    let dir: Option<PathBuf> = std::env::args().nth(1).filter(|a| !a.starts_with('-')).map(PathBuf::from);
    let args: Vec<String> = std::env::args().collect();
    let repeats: usize = args
        .iter()
        .position(|a| a == "--repeats")
        .and_then(|i| args.get(i + 1))
        .map_or(3, |n| n.parse().expect("--repeats takes a positive number"))
        .max(1);
    let loaded: Vec<_> = match &dir {
        Some(dir) => (0..)
            .map(|k| (dir.join(format!("r0_f{k}_train.parquet")), dir.join(format!("r0_f{k}_test.parquet"))))
            .take_while(|(a, _)| a.exists())
            .map(|(a, b)| (load(&a), load(&b)))
            .collect(),
        None => synthetic(),
    };
    if loaded.is_empty() {
        eprintln!(
            "no r0_f0_train.parquet in the folder given: pass a group folder of `blindspot diagnose --export-features`"
        );
        std::process::exit(2);
    }
    let n_classes = loaded.iter().flat_map(|((_, y), (_, t))| y.iter().chain(t)).max().map_or(2, |m| *m as usize + 1);
    let mut best = f64::INFINITY;
    let mut accuracy = 0.0;
    for _ in 0..repeats {
        let start = Instant::now();
        // Folds side by side, as `blindspot diagnose` runs them (each forest is parallel
        // too); each fold's hits and size, in fold order.
        let per_fold: Vec<(usize, usize)> = loaded
            .par_iter()
            .map(|((x, y), (xt, yt))| {
                let binner = Binner::fit(x);
                let params = ForestParams { n_trees: 100, seed: 42, ..ForestParams::classifier_default() };
                // As `diagnose` fits and scores a fold: the held-out rows go down each
                // tree as it grows; the most probable class, ties to the lowest.
                let (bx, bxt) = (binner.transform(x), binner.transform(xt));
                let proba = fit_classifier_scored(&bx, y, n_classes, None, &params, &bxt, 0).predictions;
                let pred = proba
                    .chunks_exact(n_classes)
                    .map(|p| (0..n_classes).fold(0, |best, c| if p[c] > p[best] { c } else { best }) as u32);
                (pred.zip(yt).filter(|(p, t)| p == *t).count(), yt.len())
            })
            .collect();
        best = best.min(start.elapsed().as_secs_f64());
        let (hits, total) = per_fold.iter().fold((0, 0), |(h, t), (fh, ft)| (h + fh, t + ft));
        accuracy = hits as f64 / total as f64;
    }
    println!(
        "blindspot forest{}: {} folds, {} features, 100 trees, {} threads: {:.3} s, blind accuracy {:.4}",
        if dir.is_some() { "" } else { " (synthetic folds)" },
        loaded.len(),
        loaded.first().map_or(0, |((x, _), _)| x.n_cols()),
        rayon::current_num_threads(),
        best,
        accuracy
    );
}
