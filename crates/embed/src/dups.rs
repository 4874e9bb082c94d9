//! Duplicates and near-duplicates, within a benchmark and between a benchmark
//! and a training split.
//!
//! - **Exact**: questions whose normalised text (lowercase, runs of anything
//!   but letters and digits as one space; question, context and options)
//!   is equal. No model needed.
//! - **Near**: pairs whose embeddings (question + options, unit length) have
//!   cosine ≥ a threshold, clustered by union-find (a cluster is a connected
//!   component of the pair graph).
//!
//! The search is exact, not approximate: similarities are computed tile by
//! tile with a matrix product (candle's gemm, all cores), every pair within
//! [`MARGIN`] of the threshold is then recomputed in a fixed order in f64
//! ([`super::dot`]), and only that value decides and is reported — so the
//! pairs are the same bytes whatever the thread count or tiling.

use std::collections::BTreeMap;

use candle_core::{Device, Tensor};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::{Embeddings, dot};
use crate::error::{Error, Result};
use crate::sample::Sample;

/// Default cosine threshold of a near-duplicate, chosen on VQA-RAD's 753
/// paraphrase pairs (a `para` question and the `freeform` one it rephrases,
/// same image): the highest threshold that finds at least 80% of them
/// (recall 0.810; 0.62 gives 0.786). Its precision among pairs on one image
/// is 0.54 — clinicians' rephrasings are loose, so this is a threshold for
/// recall; 0.85 finds 38% of them at precision 0.84 (README, "Near-duplicates").
pub const DEFAULT_THRESHOLD: f64 = 0.60;

/// How far below the threshold a tile's f32 value may be and still be rechecked.
pub const MARGIN: f64 = 1e-3;

/// Rows and columns per similarity tile: a 1024 × 4096 f32 tile is 16 MB,
/// under glibc's 32 MB ceiling for heap (not mmap) allocations, so each tile
/// reuses the last one's memory instead of faulting in fresh pages — with
/// 2048 × 8192 tiles a third of the search was page faults and copies.
const TILE_ROWS: usize = 1024;
const TILE_COLS: usize = 4096;

/// The text compared for exact duplicates: question, context and options,
/// lowercased, with every run of non-alphanumeric characters as one space.
pub fn normalize_text(s: &Sample) -> String {
    let mut raw = s.question.clone();
    if let Some(c) = &s.context {
        raw.push(' ');
        raw.push_str(c);
    }
    for o in &s.options {
        raw.push(' ');
        raw.push_str(o);
    }
    let mut out = String::with_capacity(raw.len());
    let mut gap = false;
    for ch in raw.chars().flat_map(char::to_lowercase) {
        if ch.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(ch);
        } else {
            gap = true;
        }
    }
    out
}

fn text_hash(t: &str) -> [u8; 32] {
    Sha256::digest(t.as_bytes()).into()
}

/// Groups (≥ 2 members) of samples with equal normalised text; members in
/// input order, groups by their first member.
pub fn exact_groups(samples: &[Sample]) -> Vec<Vec<usize>> {
    let mut by_hash: BTreeMap<[u8; 32], Vec<usize>> = BTreeMap::new();
    for (i, s) in samples.iter().enumerate() {
        by_hash.entry(text_hash(&normalize_text(s))).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = by_hash.into_values().filter(|g| g.len() > 1).collect();
    groups.sort();
    groups
}

/// (test index, train index) of every test sample whose normalised text
/// equals a training sample's.
pub fn exact_cross(test: &[Sample], train: &[Sample]) -> Vec<(usize, usize)> {
    let mut by_hash: BTreeMap<[u8; 32], Vec<usize>> = BTreeMap::new();
    for (j, s) in train.iter().enumerate() {
        by_hash.entry(text_hash(&normalize_text(s))).or_default().push(j);
    }
    let mut out = Vec::new();
    for (i, s) in test.iter().enumerate() {
        if let Some(js) = by_hash.get(&text_hash(&normalize_text(s))) {
            out.extend(js.iter().map(|&j| (i, j)));
        }
    }
    out
}

/// A pair of rows and their cosine similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub cosine: f64,
}

fn tensor(e: &Embeddings) -> Result<Tensor> {
    Tensor::from_slice(&e.data, (e.len(), e.dim), &Device::Cpu).map_err(|err| Error::Bug(format!("similarity: {err}")))
}

/// Pairs (a in `x`, b in `y`) with cosine ≥ `threshold`; with `same` (x and
/// y are one set) only a < b. Sorted by (a, b).
fn search(x: &Embeddings, y: &Embeddings, threshold: f64, same: bool) -> Result<Vec<Pair>> {
    if x.dim != y.dim {
        return Err(Error::Bug(format!("embedding sizes differ: {} vs {}", x.dim, y.dim)));
    }
    let bug = |err: candle_core::Error| Error::Bug(format!("similarity: {err}"));
    let cut = (threshold - MARGIN) as f32;
    let mut pairs = Vec::new();
    let (n, m) = (x.len(), y.len());
    // Whole matrices once; tiles are views into them.
    let xt = tensor(x)?;
    let yt = if same { xt.clone() } else { tensor(y)? };
    for r0 in (0..n).step_by(TILE_ROWS) {
        let r1 = (r0 + TILE_ROWS).min(n);
        let xa = xt.narrow(0, r0, r1 - r0).map_err(bug)?;
        let c_start = if same { r0 } else { 0 };
        for c0 in (c_start..m).step_by(TILE_COLS) {
            let c1 = (c0 + TILE_COLS).min(m);
            let yb = yt.narrow(0, c0, c1 - c0).map_err(bug)?;
            let sims = xa.matmul(&yb.t().map_err(bug)?).map_err(bug)?;
            // Read the product where candle wrote it (a contiguous row-major tile).
            let (storage, layout) = sims.storage_and_layout();
            let candle_core::Storage::Cpu(cpu) = &*storage else {
                return Err(Error::Bug("similarity: tensor is not on the CPU".into()));
            };
            let sims = &cpu.as_slice::<f32>().map_err(bug)?[layout.start_offset()..][..(r1 - r0) * (c1 - c0)];
            let w = c1 - c0;
            let found: Vec<Pair> = sims
                .par_chunks(w)
                .enumerate()
                .flat_map_iter(|(ri, row)| {
                    let a = r0 + ri;
                    row.iter().enumerate().filter_map(move |(ci, &v)| {
                        let b = c0 + ci;
                        (v >= cut && (!same || b > a)).then_some((a, b))
                    })
                })
                .filter_map(|(a, b)| {
                    let cosine = dot(x.row(a), y.row(b));
                    (cosine >= threshold).then_some(Pair { a, b, cosine })
                })
                .collect();
            pairs.extend(found);
        }
    }
    pairs.sort_by_key(|p| (p.a, p.b));
    Ok(pairs)
}

/// Every pair (a < b) of rows of `e` with cosine ≥ `threshold`, sorted.
pub fn near_pairs(e: &Embeddings, threshold: f64) -> Result<Vec<Pair>> {
    search(e, e, threshold, true)
}

/// Every (test row, train row) with cosine ≥ `threshold`, sorted.
pub fn cross_pairs(test: &Embeddings, train: &Embeddings, threshold: f64) -> Result<Vec<Pair>> {
    search(test, train, threshold, false)
}

/// Union-find with path halving and union by size.
struct UnionFind {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind { parent: (0..n).collect(), size: vec![1; n] }
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        if self.size[ra] < self.size[rb] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb] = ra;
        self.size[ra] += self.size[rb];
    }
}

/// Connected components (≥ 2 members) of the pair graph over `n` rows;
/// members ascending, clusters by their first member.
pub fn clusters(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Vec<Vec<usize>> {
    let mut uf = UnionFind::new(n);
    for (a, b) in pairs {
        uf.union(a, b);
    }
    let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = uf.find(i);
        by_root.entry(r).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = by_root.into_values().filter(|c| c.len() > 1).collect();
    out.sort();
    out
}

/// One reported pair.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportPair {
    /// `exact`, `near`, `train-exact` or `train-near`.
    pub kind: &'static str,
    pub id_a: String,
    pub id_b: String,
    /// `None` for exact pairs found without the model.
    pub cosine: Option<f64>,
    pub text_a: String,
    pub text_b: String,
}

/// `dups.json`, and the release's `report/duplicates.json`: exact and near
/// duplicates, copies of a training split, near-duplicate images.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DupsFile {
    /// Questions searched.
    pub n_samples: usize,
    /// How texts are made comparable for exact duplicates.
    pub normalization: String,
    pub exact: ExactDups,
    /// Null when no embedding model was used.
    pub near: Option<NearDups>,
    /// Null without a training split.
    pub train: Option<TrainDups>,
    /// Null when the images were not compared.
    pub images: Option<super::image_dups::ImageDupsFile>,
    /// Near-duplicate videos; absent for a benchmark without videos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub videos: Option<super::video_dups::VideoDupsFile>,
    /// In a release: whether `prune-duplicates` dropped questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune_duplicates: Option<bool>,
    /// In a release: the questions `prune-duplicates` dropped, with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<Vec<DupRemoved>>,
}

/// Questions with equal normalised text.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ExactDups {
    pub pairs: usize,
    pub clusters: usize,
    pub samples_in_clusters: usize,
    /// The clusters' question ids.
    pub members: Vec<Vec<String>>,
}

/// Questions whose embeddings have cosine at or above the threshold.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct NearDups {
    pub threshold: f64,
    /// The embedding model's fingerprint.
    pub model: Option<String>,
    /// What was embedded.
    pub text: String,
    pub pairs: usize,
    pub clusters: usize,
    pub samples_in_clusters: usize,
    pub members: Vec<Vec<String>>,
}

/// Copies of the training split.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct TrainDups {
    pub n_train: usize,
    pub exact_pairs: usize,
    pub samples_with_exact_copy: usize,
    /// Null without an embedding model.
    pub near_pairs: Option<usize>,
    pub samples_with_near_copy: Option<usize>,
    /// In a release: the training split's file as the pipeline names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A question `prune-duplicates` dropped.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DupRemoved {
    pub id: String,
    pub reason: String,
}

/// What `blindspot dups` reports.
#[derive(Debug, Clone)]
pub struct DupsReport {
    pub n_samples: usize,
    pub n_train: Option<usize>,
    pub threshold: Option<f64>,
    pub model: Option<String>,
    pub exact_clusters: Vec<Vec<String>>,
    pub near_clusters: Vec<Vec<String>>,
    pub pairs: Vec<ReportPair>,
    /// Near-duplicate images, when the images were compared.
    pub images: Option<super::image_dups::ImageDups>,
    /// Near-duplicate videos, when the benchmark has videos.
    pub videos: Option<super::video_dups::VideoDups>,
}

/// Embeddings of the benchmark (and the training split) for the near search.
pub struct NearInput<'a> {
    pub test: &'a Embeddings,
    pub train: Option<&'a Embeddings>,
    pub threshold: f64,
    pub model: String,
}

/// Finds exact duplicates (always) and near-duplicates (with embeddings),
/// within `test` and against `train`.
pub fn find(test: &[Sample], train: Option<&[Sample]>, near: Option<NearInput<'_>>) -> Result<DupsReport> {
    let ids = |v: &[usize], s: &[Sample]| v.iter().map(|&i| s[i].id.clone()).collect::<Vec<_>>();
    let mut pairs = Vec::new();
    let exact = exact_groups(test);
    for g in &exact {
        for (k, &a) in g.iter().enumerate() {
            for &b in &g[k + 1..] {
                pairs.push(ReportPair {
                    kind: "exact",
                    id_a: test[a].id.clone(),
                    id_b: test[b].id.clone(),
                    cosine: None,
                    text_a: test[a].question.clone(),
                    text_b: test[b].question.clone(),
                });
            }
        }
    }
    if let Some(train) = train {
        for (a, b) in exact_cross(test, train) {
            pairs.push(ReportPair {
                kind: "train-exact",
                id_a: test[a].id.clone(),
                id_b: train[b].id.clone(),
                cosine: None,
                text_a: test[a].question.clone(),
                text_b: train[b].question.clone(),
            });
        }
    }
    let mut near_clusters = Vec::new();
    let (threshold, model) = match &near {
        Some(n) => (Some(n.threshold), Some(n.model.clone())),
        None => (None, None),
    };
    if let Some(n) = near {
        if n.test.len() != test.len() {
            return Err(Error::Bug(format!("{} embeddings for {} samples", n.test.len(), test.len())));
        }
        let found = near_pairs(n.test, n.threshold)?;
        near_clusters = clusters(test.len(), found.iter().map(|p| (p.a, p.b))).iter().map(|c| ids(c, test)).collect();
        pairs.extend(found.iter().map(|p| ReportPair {
            kind: "near",
            id_a: test[p.a].id.clone(),
            id_b: test[p.b].id.clone(),
            cosine: Some(p.cosine),
            text_a: test[p.a].question.clone(),
            text_b: test[p.b].question.clone(),
        }));
        if let (Some(train), Some(te)) = (train, n.train) {
            for p in cross_pairs(n.test, te, n.threshold)? {
                pairs.push(ReportPair {
                    kind: "train-near",
                    id_a: test[p.a].id.clone(),
                    id_b: train[p.b].id.clone(),
                    cosine: Some(p.cosine),
                    text_a: test[p.a].question.clone(),
                    text_b: train[p.b].question.clone(),
                });
            }
        }
    }
    Ok(DupsReport {
        n_samples: test.len(),
        n_train: train.map(<[Sample]>::len),
        threshold,
        model,
        exact_clusters: exact.iter().map(|g| ids(g, test)).collect(),
        near_clusters,
        pairs,
        images: None,
        videos: None,
    })
}

impl DupsReport {
    fn count(&self, kind: &str) -> usize {
        self.pairs.iter().filter(|p| p.kind == kind).count()
    }

    fn test_ids_with(&self, kind: &str) -> usize {
        self.pairs
            .iter()
            .filter(|p| p.kind == kind)
            .map(|p| p.id_a.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }

    /// `dups.json` (and, with what the release adds, `report/duplicates.json`).
    pub fn summary(&self) -> DupsFile {
        DupsFile {
            n_samples: self.n_samples,
            normalization: "lowercase; every run of characters other than letters and digits is one space; question, context and options".into(),
            exact: ExactDups {
                pairs: self.count("exact"),
                clusters: self.exact_clusters.len(),
                samples_in_clusters: self.exact_clusters.iter().map(Vec::len).sum(),
                members: self.exact_clusters.clone(),
            },
            near: self.threshold.map(|t| NearDups {
                threshold: crate::io::r6(t),
                model: self.model.clone(),
                text: "question, then each option on its own line".into(),
                pairs: self.count("near"),
                clusters: self.near_clusters.len(),
                samples_in_clusters: self.near_clusters.iter().map(Vec::len).sum(),
                members: self.near_clusters.clone(),
            }),
            train: self.n_train.map(|n| TrainDups {
                n_train: n,
                exact_pairs: self.count("train-exact"),
                samples_with_exact_copy: self.test_ids_with("train-exact"),
                near_pairs: self.threshold.map(|_| self.count("train-near")),
                samples_with_near_copy: self.threshold.map(|_| self.test_ids_with("train-near")),
                file: None,
            }),
            images: self.images.as_ref().map(super::image_dups::ImageDups::file),
            videos: self.videos.as_ref().map(super::video_dups::VideoDups::file),
            prune_duplicates: None,
            removed: None,
        }
    }

    /// `pairs.parquet`: kind, id_a, id_b, cosine, text_a, text_b.
    pub fn pairs_batch(&self) -> Result<arrow::array::RecordBatch> {
        use arrow::array::{ArrayRef, Float64Builder, StringBuilder};
        use arrow::datatypes::{DataType, Field, Schema};
        use std::sync::Arc;
        let schema = Arc::new(Schema::new(vec![
            Field::new("kind", DataType::Utf8, false),
            Field::new("id_a", DataType::Utf8, false),
            Field::new("id_b", DataType::Utf8, false),
            Field::new("cosine", DataType::Float64, true),
            Field::new("text_a", DataType::Utf8, false),
            Field::new("text_b", DataType::Utf8, false),
        ]));
        let mut cols: Vec<StringBuilder> = (0..5).map(|_| StringBuilder::new()).collect();
        let mut cos = Float64Builder::new();
        for p in &self.pairs {
            for (c, v) in cols.iter_mut().zip([p.kind, &p.id_a, &p.id_b, &p.text_a, &p.text_b]) {
                c.append_value(v);
            }
            cos.append_option(p.cosine);
        }
        let mut arrays: Vec<ArrayRef> = cols.iter_mut().map(|c| Arc::new(c.finish()) as ArrayRef).collect();
        arrays.insert(3, Arc::new(cos.finish()));
        arrow::array::RecordBatch::try_new(schema, arrays).map_err(|e| Error::Bug(format!("pairs batch: {e}")))
    }

    /// Writes `dups.json` and `pairs.parquet` into `dir`.
    pub fn write(&self, dir: &std::path::Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        crate::io::parquet::write_batch(&dir.join("pairs.parquet"), &self.pairs_batch()?)?;
        crate::io::fs::write_json(&dir.join("dups.json"), &self.summary())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn normalised_text_ignores_case_spacing_and_punctuation() {
        let mut a = Sample::new("1", "Is there  a  Pneumothorax?", "yes");
        let b = Sample::new("2", "is there a pneumothorax", "no");
        assert_eq!(normalize_text(&a), "is there a pneumothorax");
        assert_eq!(normalize_text(&a), normalize_text(&b));
        a.options = vec!["Yes".into(), "No".into()];
        assert_eq!(normalize_text(&a), "is there a pneumothorax yes no");
        let c = Sample::new("3", "Is there a pneumothorax here?", "no");
        assert_eq!(
            exact_groups(&[a.clone(), b.clone(), c.clone(), Sample::new("4", "IS THERE A PNEUMOTHORAX", "x")]),
            vec![vec![1, 3]]
        );
        assert_eq!(exact_cross(&[c, b], &[Sample::new("t", "is there a pneumothorax!", "y")]), vec![(1, 0)]);
    }

    #[test]
    fn search_finds_exactly_the_pairs_above_the_threshold() {
        // Brute force in f64 over seeded random vectors with planted near copies.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let dim = 16;
        let mut rows: Vec<Vec<f32>> = Vec::new();
        for i in 0..300 {
            let v: Vec<f32> = if i % 10 == 9 {
                rows[i - 1].iter().map(|x| x + rng.random_range(-0.05..0.05)).collect()
            } else {
                (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect()
            };
            rows.push(unit(&v));
        }
        let e = Embeddings::new(dim, rows.concat());
        for t in [0.5, 0.8, 0.95] {
            let got = near_pairs(&e, t).unwrap();
            let mut want = Vec::new();
            for a in 0..e.len() {
                for b in a + 1..e.len() {
                    let c = dot(e.row(a), e.row(b));
                    if c >= t {
                        want.push(Pair { a, b, cosine: c });
                    }
                }
            }
            assert_eq!(got, want, "threshold {t}");
            assert!(!got.is_empty());
        }
        let planted = near_pairs(&e, 0.95).unwrap();
        assert!((0..30).all(|k| planted.iter().any(|p| (p.a, p.b) == (10 * k + 8, 10 * k + 9))));
        // Cross search: the set against itself holds each pair both ways, and the diagonal.
        let cross = cross_pairs(&e, &e, 0.95).unwrap();
        assert_eq!(cross.len(), 2 * planted.len() + e.len());
    }

    #[test]
    fn clusters_are_connected_components() {
        let c = clusters(7, [(0, 3), (3, 5), (1, 6)]);
        assert_eq!(c, vec![vec![0, 3, 5], vec![1, 6]]);
        assert!(clusters(3, []).is_empty());
    }
}
