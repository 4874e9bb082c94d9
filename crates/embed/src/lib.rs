//! Sentence embeddings, computed offline in Rust.
//!
//! ```text
//! samples ─▶ texts (question · each option · question+options) ─▶ unique, sorted
//!   ─▶ cache (.blindspot/cache/embed/<sha256>.bin) or Embedder (MiniLM on candle)
//!   ─▶ SampleEmbeddings (per id) ─▶ embeddings.parquet · dups · TsT-Embed
//! ```
//! The model is never downloaded here: [`model::resolve_model_dir`] finds a
//! folder set up beforehand (`just model`) and fails with a message saying how
//! to obtain it. Every embedding is unit length (the model's mean pooling and
//! L2 normalisation), so a dot product is a cosine similarity.

// The crates below this one, under the module names the code uses.
use blindspot_core::{error, io, progress, sample};

pub mod bert;
pub mod cache;
pub mod dups;
pub mod image_dups;
pub mod minilm;
pub mod model;
pub mod output;
pub mod video_dups;

use std::collections::BTreeMap;

use crate::error::Result;
use crate::sample::Sample;

/// Something that turns texts into unit-length vectors.
pub trait Embedder: Sync {
    /// Identifies the model's bytes and every setting that changes an
    /// embedding: part of every cache key.
    fn fingerprint(&self) -> &str;
    /// Vector length.
    fn dim(&self) -> usize;
    /// One unit-length row per text, in order; identical bytes for identical
    /// input, whatever the thread count.
    fn embed(&self, texts: &[&str]) -> Result<Embeddings>;
}

/// Row-major `n × dim` matrix of f32 embeddings.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    pub dim: usize,
    pub data: Vec<f32>,
}

impl Embeddings {
    pub fn new(dim: usize, data: Vec<f32>) -> Self {
        debug_assert!(dim > 0 && data.len().is_multiple_of(dim));
        Embeddings { dim, data }
    }
    pub fn len(&self) -> usize {
        self.data.len() / self.dim.max(1)
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Dot product in a fixed order (f32 accumulated in f64): the cosine of two
/// unit vectors, bit-identical wherever it is computed.
pub fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// The text embedded for "question + options": the question, then each
/// option on its own line.
pub fn question_with_options(s: &Sample) -> String {
    let mut t = s.question.clone();
    for o in &s.options {
        t.push('\n');
        t.push_str(o);
    }
    t
}

/// The embeddings of one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleEmbedding {
    pub question: Vec<f32>,
    pub options: Vec<Vec<f32>>,
    pub question_options: Vec<f32>,
}

/// Embeddings of a sample set, by id (ids sorted as the samples are).
#[derive(Debug, Clone, PartialEq)]
pub struct SampleEmbeddings {
    /// In the samples' order (canonical id order).
    pub ids: Vec<String>,
    pub rows: Vec<SampleEmbedding>,
    pub dim: usize,
    /// The embedder's fingerprint.
    pub model: String,
}

impl SampleEmbeddings {
    pub fn get(&self, i: usize) -> &SampleEmbedding {
        &self.rows[i]
    }
    /// Index of each id.
    pub fn index(&self) -> BTreeMap<&str, usize> {
        self.ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect()
    }
}

/// Where embeddings are cached, and whether to use the cache.
#[derive(Debug, Clone)]
pub struct EmbedSettings {
    /// `None`: no cache (always compute).
    pub cache_dir: Option<std::path::PathBuf>,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        EmbedSettings { cache_dir: Some(cache::default_dir()) }
    }
}

/// Embeds many texts through the cache: unique texts, in sorted order, form
/// the cache key, so a rerun on the same content reads instead of computing.
/// Returns one row per input text.
pub fn embed_texts(
    embedder: &dyn Embedder,
    texts: &[&str],
    settings: &EmbedSettings,
    bar_msg: &'static str,
) -> Result<Embeddings> {
    let unique: Vec<&str> = texts.iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let key = cache::key(embedder.fingerprint(), &unique);
    let cached = settings.cache_dir.as_deref().and_then(|d| cache::read(d, &key, unique.len(), embedder.dim()));
    let table = match cached {
        Some(e) => e,
        None => {
            let e = embed_in_chunks(embedder, &unique, bar_msg)?;
            if let Some(dir) = settings.cache_dir.as_deref() {
                // A cache that cannot be written costs a recomputation next time, nothing more.
                if let Err(err) = cache::write(dir, &key, &e) {
                    eprintln!("warning: embedding cache not written: {err}");
                }
            }
            e
        }
    };
    let pos: BTreeMap<&str, usize> = unique.iter().enumerate().map(|(i, t)| (*t, i)).collect();
    let mut data = Vec::with_capacity(texts.len() * table.dim);
    for t in texts {
        data.extend_from_slice(table.row(pos[t]));
    }
    Ok(Embeddings::new(table.dim, data))
}

/// Texts per progress step: the bar moves, and each chunk is batched inside the embedder.
const CHUNK: usize = 512;

fn embed_in_chunks(embedder: &dyn Embedder, texts: &[&str], bar_msg: &'static str) -> Result<Embeddings> {
    let bar = crate::progress::bar(texts.len() as u64, bar_msg);
    let mut data = Vec::with_capacity(texts.len() * embedder.dim());
    for chunk in texts.chunks(CHUNK) {
        data.extend(embedder.embed(chunk)?.data);
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    Ok(Embeddings::new(embedder.dim(), data))
}

/// The embed stage: the question, each option and question+options of every
/// sample. Rows follow `samples` (canonical id order).
pub fn embed_samples(
    samples: &[Sample],
    embedder: &dyn Embedder,
    settings: &EmbedSettings,
) -> Result<SampleEmbeddings> {
    let joined: Vec<String> = samples.iter().map(question_with_options).collect();
    let mut texts: Vec<&str> = Vec::new();
    for (s, qo) in samples.iter().zip(&joined) {
        texts.push(&s.question);
        texts.extend(s.options.iter().map(String::as_str));
        texts.push(qo);
    }
    let e = embed_texts(embedder, &texts, settings, "embed")?;
    let mut rows = Vec::with_capacity(samples.len());
    let mut at = 0;
    for s in samples {
        let question = e.row(at).to_vec();
        let options = (0..s.options.len()).map(|j| e.row(at + 1 + j).to_vec()).collect();
        let question_options = e.row(at + 1 + s.options.len()).to_vec();
        at += s.options.len() + 2;
        rows.push(SampleEmbedding { question, options, question_options });
    }
    Ok(SampleEmbeddings {
        ids: samples.iter().map(|s| s.id.clone()).collect(),
        rows,
        dim: e.dim,
        model: embedder.fingerprint().to_string(),
    })
}

/// The question+options embedding of each sample, as one matrix.
pub fn question_options_matrix(e: &SampleEmbeddings) -> Embeddings {
    let mut data = Vec::with_capacity(e.rows.len() * e.dim);
    for r in &e.rows {
        data.extend_from_slice(&r.question_options);
    }
    Embeddings::new(e.dim, data)
}
