//! all-MiniLM-L6-v2: BERT ([`super::bert`], matrix products on candle) from `model.safetensors`, the model's
//! own `tokenizer.json` (tokenizers, pure-Rust regex), mean pooling over the
//! attended tokens and L2 normalisation — what sentence-transformers does for
//! this model (`modules.json`: Transformer → Pooling(mean) → Normalize), with
//! sequences truncated at `sentence_bert_config.json`'s `max_seq_length`.
//!
//! Batches hold texts of one token count (at most [`BATCH`]), so nothing is
//! padded and an embedding is a function of its text alone — with padding,
//! the same text came out up to 1e-7 different in different batches, which
//! would make a cached table differ from a fresh one. `tests/embed.rs`
//! checks that a text embeds to the same bits alone and in a batch, and that
//! `blindspot embed` writes the same bytes with 1 and 2 threads.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{Bert, Config};
use super::{Embedder, Embeddings};
use crate::error::{Error, Location, Problem, Result};

/// Texts per forward pass.
pub const BATCH: usize = 32;

/// The model, ready to embed.
pub struct MiniLm {
    model: Bert,
    tokenizer: Tokenizer,
    dim: usize,
    max_length: usize,
    fingerprint: String,
    dir: PathBuf,
}

fn bad_model(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::one(Problem::new(Location::file(path), format!("cannot load the embedding model: {what}")).help(format!(
        "the file is damaged or not all-MiniLM-L6-v2; remove the folder and {}",
        super::model::how_to_obtain(path.parent().unwrap_or(path))
    )))
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| bad_model(path, e))
}

impl MiniLm {
    /// Loads the model in `dir` (see [`super::model::resolve_model_dir`]),
    /// truncating at the folder's `max_seq_length` (256) unless `max_length` is given.
    pub fn load(dir: &Path, max_length: Option<usize>) -> Result<MiniLm> {
        let config_path = dir.join("config.json");
        let config_text = std::fs::read_to_string(&config_path).map_err(|e| Error::io(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| bad_model(&config_path, e))?;
        if let Some(what) = config.unsupported() {
            return Err(bad_model(&config_path, what));
        }
        // The pooling and normalisation the model was trained with.
        let pooling_path = dir.join("1_Pooling/config.json");
        if pooling_path.is_file() {
            let p = read_json(&pooling_path)?;
            if p.get("pooling_mode_mean_tokens") != Some(&serde_json::Value::Bool(true)) {
                return Err(bad_model(&pooling_path, "only mean pooling is supported"));
            }
        }
        let modules_path = dir.join("modules.json");
        if modules_path.is_file() && !read_json(&modules_path)?.to_string().contains("models.Normalize") {
            return Err(bad_model(&modules_path, "the model has no Normalize module; blindspot needs unit vectors"));
        }
        let st_path = dir.join("sentence_bert_config.json");
        let model_max = if st_path.is_file() {
            read_json(&st_path)?.get("max_seq_length").and_then(|v| v.as_u64()).map_or(256, |v| v as usize)
        } else {
            256
        };
        let max_length = max_length.unwrap_or(model_max).clamp(2, config.max_position_embeddings);

        let tok_path = dir.join("tokenizer.json");
        let tok_bytes = std::fs::read(&tok_path).map_err(|e| Error::io(&tok_path, e))?;
        let mut tokenizer = Tokenizer::from_bytes(&tok_bytes).map_err(|e| bad_model(&tok_path, e))?;
        // tokenizer.json pads and truncates at 128; sentence-transformers overrides both.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
            .map_err(|e| bad_model(&tok_path, e))?;

        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|e| Error::io(&weights_path, e))?;
        let mut h = Sha256::new();
        h.update(b"blindspot-minilm-v2\0");
        h.update(Sha256::digest(&weights));
        h.update(Sha256::digest(&tok_bytes));
        h.update(Sha256::digest(config_text.as_bytes()));
        h.update(format!("max_length={max_length};pooling=mean;normalize=l2").as_bytes());
        let fingerprint = format!("all-MiniLM-L6-v2@{}", &hex::encode(h.finalize())[..16]);
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| bad_model(&weights_path, e))?;
        let model = Bert::load(vb, &config).map_err(|e| bad_model(&weights_path, e))?;
        Ok(MiniLm { model, tokenizer, dim: config.hidden_size, max_length, fingerprint, dir: dir.to_path_buf() })
    }

    /// Sequence length limit in tokens (including [CLS] and [SEP]).
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// Token ids of one text, truncated.
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Bug(format!("tokenizer ({}): {e}", self.dir.display())))?;
        Ok(enc.get_ids().to_vec())
    }

    /// One forward pass over texts already tokenized, all of one length; rows in order.
    fn forward(&self, batch: &[&Vec<u32>]) -> Result<Vec<f32>> {
        let seqs: Vec<&[u32]> = batch.iter().map(|t| t.as_slice()).collect();
        let hidden = self.model.forward(&seqs).map_err(|e| Error::Bug(format!("embedding forward pass: {e}")))?;
        // Mean over the tokens, then unit length; f64 sums in token order.
        let (d, len) = (self.dim, seqs.first().map_or(0, |s| s.len()));
        if len == 0 {
            return Err(Error::Bug("embedding forward pass: an empty token sequence".into()));
        }
        let mut out = Vec::with_capacity(seqs.len() * d);
        for seq in hidden.chunks_exact(len * d) {
            let mut acc = vec![0f64; d];
            for token in seq.chunks_exact(d) {
                for (a, v) in acc.iter_mut().zip(token) {
                    *a += f64::from(*v);
                }
            }
            let mean: Vec<f64> = acc.iter().map(|a| a / len as f64).collect();
            let norm = mean.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-12);
            out.extend(mean.iter().map(|v| (v / norm) as f32));
        }
        Ok(out)
    }
}

impl Embedder for MiniLm {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Embeddings> {
        let tokens: Vec<Vec<u32>> = texts.par_iter().map(|t| self.tokenize(t)).collect::<Result<_>>()?;
        // Similar lengths together (little padding); ties in input order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (tokens[i].len(), i));
        // Batches of equal token count, so nothing is padded: an embedding
        // then depends on its text alone, not on its batch neighbours
        // (padding changes the reduction shapes and so the last bits).
        let batches: Vec<&[usize]> =
            order.chunk_by(|&a, &b| tokens[a].len() == tokens[b].len()).flat_map(|run| run.chunks(BATCH)).collect();
        let outputs: Vec<Vec<f32>> = batches
            .par_iter()
            .map(|b| self.forward(&b.iter().map(|&i| &tokens[i]).collect::<Vec<_>>()))
            .collect::<Result<_>>()?;
        let d = self.dim;
        let mut data = vec![0f32; texts.len() * d];
        for (b, out) in batches.iter().zip(&outputs) {
            for (k, &i) in b.iter().enumerate() {
                data[i * d..(i + 1) * d].copy_from_slice(&out[k * d..(k + 1) * d]);
            }
        }
        Ok(Embeddings::new(d, data))
    }
}
