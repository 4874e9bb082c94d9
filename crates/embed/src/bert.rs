//! The BERT encoder of all-MiniLM-L6-v2, inference only: the matrix
//! products on candle (gemm, all cores), everything else here, row by row.
//!
//! This replaced `candle_transformers::models::bert` after measuring it
//! (README, Performance): there 58% of the time went outside the matrix
//! products — GELU through scalar `libm::erff`, and candle's element-wise
//! thread pool spinning while two batches ran at once — and it embedded at
//! 0.58× PyTorch's rate on the same texts. Here each batch runs its
//! element-wise steps on its own thread with branch-free `exp`/`erf` the
//! compiler vectorises, and the query, key and value projections are one
//! product. No padding ever reaches the encoder (batches hold texts of one
//! token count, see [`super::minilm`]), so there is no attention mask.
//!
//! Every step is a function of one row (one token, or one sequence for
//! attention), so a text's embedding does not depend on its batch.

use candle_core::{Device, Storage, Tensor};
use candle_nn::VarBuilder;

/// The fields of the model's `config.json` the encoder uses.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "absolute")]
    pub position_embedding_type: String,
}

fn absolute() -> String {
    "absolute".into()
}

impl Config {
    /// What this encoder cannot run, if anything.
    pub fn unsupported(&self) -> Option<String> {
        if self.hidden_act != "gelu" {
            return Some(format!("hidden_act {:?} (only \"gelu\", the exact erf form, is supported)", self.hidden_act));
        }
        if self.position_embedding_type != "absolute" {
            return Some(format!("position_embedding_type {:?} (only \"absolute\")", self.position_embedding_type));
        }
        if self.num_attention_heads == 0 || !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return Some(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        None
    }
}

type CResult<T> = candle_core::Result<T>;

/// Layer normalisation over the last dimension.
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(vb: VarBuilder, n: usize, eps: f64) -> CResult<Norm> {
        Ok(Norm { gamma: vb.get(n, "weight")?.to_vec1()?, beta: vb.get(n, "bias")?.to_vec1()?, eps: eps as f32 })
    }

    #[inline(always)]
    fn apply(&self, x: &mut [f32]) {
        let n = self.gamma.len();
        for row in x.chunks_exact_mut(n) {
            let mean = sum(row) / n as f32;
            let var = sum_sq_dev(row, mean) / n as f32;
            let rstd = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * rstd * g + b;
            }
        }
    }
}

/// A linear layer: `x · W + b`, with `W` stored `in × out`.
struct Dense {
    w: Tensor,
    bias: Vec<f32>,
    n_in: usize,
    n_out: usize,
}

impl Dense {
    /// The layers `names` (each `out_i × n_in` in the checkpoint) as one
    /// product with their outputs side by side.
    fn load(vb: &VarBuilder, names: &[&str], n_in: usize, n_out: usize) -> CResult<Dense> {
        let mut ws = Vec::new();
        let mut bias = Vec::new();
        for name in names {
            ws.push(vb.get((n_out, n_in), &format!("{name}.weight"))?);
            bias.extend(vb.get(n_out, &format!("{name}.bias"))?.to_vec1::<f32>()?);
        }
        let w = Tensor::cat(&ws, 0)?.t()?.contiguous()?;
        Ok(Dense { w, bias, n_in, n_out: n_out * names.len() })
    }

    fn apply(&self, x: &[f32], rows: usize) -> CResult<Vec<f32>> {
        let y = Tensor::from_slice(x, (rows, self.n_in), &Device::Cpu)?.matmul(&self.w)?;
        let (storage, layout) = y.storage_and_layout();
        let Storage::Cpu(cpu) = &*storage else {
            candle_core::bail!("the encoder runs on the CPU");
        };
        let y = &cpu.as_slice::<f32>()?[layout.start_offset()..][..rows * self.n_out];
        let mut out = Vec::with_capacity(rows * self.n_out);
        for row in y.chunks_exact(self.n_out) {
            out.extend(row.iter().zip(&self.bias).map(|(a, b)| a + b));
        }
        Ok(out)
    }
}

struct Layer {
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

/// The encoder, loaded.
pub struct Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    vocab: usize,
    max_position: usize,
}

impl Bert {
    /// Loads the weights under `vb` (a `bert.` prefix is accepted).
    pub fn load(vb: VarBuilder, c: &Config) -> CResult<Bert> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") { vb.pp("bert") } else { vb };
        let h = c.hidden_size;
        let e = vb.pp("embeddings");
        let word = e.get((c.vocab_size, h), "word_embeddings.weight")?.flatten_all()?.to_vec1()?;
        let position = e.get((c.max_position_embeddings, h), "position_embeddings.weight")?.flatten_all()?.to_vec1()?;
        // Every text is one segment: token type 0.
        let token_type = e.get((c.type_vocab_size, h), "token_type_embeddings.weight")?.get(0)?.to_vec1()?;
        let norm = Norm::load(e.pp("LayerNorm"), h, c.layer_norm_eps)?;
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            layers.push(Layer {
                qkv: Dense::load(&a.pp("self"), &["query", "key", "value"], h, h)?,
                attention_out: Dense::load(&a.pp("output"), &["dense"], h, h)?,
                attention_norm: Norm::load(a.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
                intermediate: Dense::load(&l.pp("intermediate"), &["dense"], h, c.intermediate_size)?,
                output: Dense::load(&l.pp("output"), &["dense"], c.intermediate_size, h)?,
                output_norm: Norm::load(l.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
            });
        }
        Ok(Bert {
            word,
            position,
            token_type,
            norm,
            layers,
            hidden: h,
            heads: c.num_attention_heads,
            vocab: c.vocab_size,
            max_position: c.max_position_embeddings,
        })
    }

    /// Hidden size.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Last hidden states (`n·len × hidden`, sequence by sequence) of `n`
    /// token sequences that all have the same length.
    pub fn forward(&self, seqs: &[&[u32]]) -> CResult<Vec<f32>> {
        let (n, len, h) = (seqs.len(), seqs.first().map_or(0, |s| s.len()), self.hidden);
        if seqs.iter().any(|s| s.len() != len) || len > self.max_position {
            candle_core::bail!("a batch must hold sequences of one length, at most {}", self.max_position);
        }
        let mut x = Vec::with_capacity(n * len * h);
        for s in seqs {
            for (p, &id) in s.iter().enumerate() {
                let id = id as usize;
                if id >= self.vocab {
                    candle_core::bail!("token id {id} is outside the vocabulary ({})", self.vocab);
                }
                let word = &self.word[id * h..(id + 1) * h];
                let pos = &self.position[p * h..(p + 1) * h];
                x.extend(word.iter().zip(pos).zip(&self.token_type).map(|((w, p), t)| w + t + p));
            }
        }
        vectorised(|| self.norm.apply(&mut x));
        let rows = n * len;
        for layer in &self.layers {
            let qkv = layer.qkv.apply(&x, rows)?;
            let context = vectorised(|| attention(&qkv, n, len, self.heads, h));
            let mut a = layer.attention_out.apply(&context, rows)?;
            vectorised(|| {
                add(&mut a, &x);
                layer.attention_norm.apply(&mut a);
            });
            let mut inter = layer.intermediate.apply(&a, rows)?;
            vectorised(|| inter.iter_mut().for_each(|v| *v = gelu(*v)));
            let mut out = layer.output.apply(&inter, rows)?;
            vectorised(|| {
                add(&mut out, &a);
                layer.output_norm.apply(&mut out);
            });
            x = out;
        }
        Ok(x)
    }
}

/// Runs `f` compiled for the widest vector instructions this CPU has
/// (AVX-512 or AVX2, detected at run time by `pulp`; the baseline is SSE2).
/// The element-wise helpers below are `inline(always)` so they are compiled
/// inside it. Their arithmetic is written out in a fixed order (explicit
/// partial sums, no fused multiply-add), so the result is the same bits
/// whichever width runs it.
fn vectorised<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

/// Lanes of the register-blocked loops in [`attention`].
const LANES: usize = 8;

/// Scaled dot-product self-attention of every head over each sequence;
/// `qkv` rows are `[query | key | value]`, heads side by side in each.
/// Both products keep a block of [`LANES`] outputs in registers across the
/// inner sum (scores over the key positions, context over the head's
/// dimensions), so each runs as vector multiply-adds without a store per step.
#[inline(always)]
fn attention(qkv: &[f32], n: usize, len: usize, heads: usize, h: usize) -> Vec<f32> {
    let dh = h / heads;
    let scale = 1.0 / (dh as f32).sqrt();
    // Key positions padded to whole blocks; the padding keys are zero and
    // their scores are never used.
    let padded = len.div_ceil(LANES) * LANES;
    let mut context = vec![0f32; n * len * h];
    let (mut kt, mut v, mut scores) = (vec![0f32; dh * padded], vec![0f32; len * dh], vec![0f32; padded]);
    for s in 0..n {
        let seq = &qkv[s * len * 3 * h..(s + 1) * len * 3 * h];
        for head in 0..heads {
            // This head's keys transposed (dh × padded) and values (len × dh).
            for p in 0..len {
                let row = &seq[p * 3 * h..(p + 1) * 3 * h];
                for (d, &x) in row[h + head * dh..h + (head + 1) * dh].iter().enumerate() {
                    kt[d * padded + p] = x;
                }
                v[p * dh..(p + 1) * dh].copy_from_slice(&row[2 * h + head * dh..2 * h + (head + 1) * dh]);
            }
            for i in 0..len {
                let q = &seq[i * 3 * h + head * dh..i * 3 * h + (head + 1) * dh];
                let (score_blocks, _) = scores.as_chunks_mut::<LANES>();
                for (block, out) in score_blocks.iter_mut().enumerate() {
                    let acc = weighted_block(q, &kt, padded, block);
                    for (o, a) in out.iter_mut().zip(acc) {
                        *o = a * scale;
                    }
                }
                let probs = &mut scores[..len];
                softmax(probs);
                let out = &mut context[(s * len + i) * h + head * dh..(s * len + i) * h + (head + 1) * dh];
                let (out_blocks, out_tail) = out.as_chunks_mut::<LANES>();
                for (block, o) in out_blocks.iter_mut().enumerate() {
                    *o = weighted_block(probs, &v, dh, block);
                }
                // A head size that is not a whole number of blocks.
                let d0 = dh - out_tail.len();
                for (j, &p) in probs.iter().enumerate() {
                    for (o, x) in out_tail.iter_mut().zip(&v[j * dh + d0..(j + 1) * dh]) {
                        *o += p * x;
                    }
                }
            }
        }
    }
    context
}

/// Σ_r weights[r] · (block `block`, [`LANES`] wide, of row r of `matrix`,
/// whose rows are `stride` long): the block stays in registers across the
/// sum. Scores are queries against transposed keys, context is
/// probabilities against values.
#[inline(always)]
fn weighted_block(weights: &[f32], matrix: &[f32], stride: usize, block: usize) -> [f32; LANES] {
    let mut acc = [0f32; LANES];
    for (r, &w) in weights.iter().enumerate() {
        let row = &matrix[r * stride..(r + 1) * stride].as_chunks::<LANES>().0[block];
        for (a, x) in acc.iter_mut().zip(row) {
            *a += w * x;
        }
    }
    acc
}

#[inline(always)]
fn add(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
}

/// Sum with eight running partial sums, so the loop vectorises (a single
/// running sum is a serial chain the compiler may not reorder).
#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
fn sum_sq_dev(x: &[f32], mean: f32) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().map(|v| (v - mean) * (v - mean)).sum();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += (v - mean) * (v - mean);
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    x.iter_mut().for_each(|v| *v = exp(*v - max));
    let total = sum(x);
    x.iter_mut().for_each(|v| *v /= total);
}

/// `e^x` in f32 (Cephes `expf`: x = n·ln2 + r, a degree-5 polynomial in r,
/// 2^n from the exponent bits), without branches or library calls so that
/// loops over it vectorise. Relative error below 2e-7 on [-87, 88].
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Round to nearest by the 1.5·2^23 trick (no `round` call).
    const SHIFT: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + SHIFT;
    let n = shifted - SHIFT;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r + 1.666_666_5e-1)
        * r
        + 0.5;
    let y = p * r * r + r + 1.0;
    // n is the low bits of `shifted` (integer arithmetic on the bits, not
    // a saturating `as i32` conversion, which does not vectorise).
    let n_int = shifted.to_bits().wrapping_sub(SHIFT.to_bits());
    y * f32::from_bits(n_int.wrapping_add(127) << 23)
}

/// erf in f32 (Abramowitz & Stegun 7.1.26, absolute error below 3e-7),
/// branch-free like [`exp`].
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152) * t + 1.421_413_8) * t - 0.284_496_72) * t + 0.254_829_6) * t;
    (1.0 - poly * exp(-a * a)).copysign(x)
}

/// GELU, the exact (erf) form BERT was trained with.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_match_the_library_functions() {
        let mut worst_exp = 0f64;
        let mut worst_erf = 0f64;
        for i in -80_000..=80_000 {
            let x = i as f32 / 1000.0;
            let want = f64::from(x).exp();
            worst_exp = worst_exp.max(((f64::from(exp(x)) - want) / want).abs());
            let x = i as f32 / 10_000.0;
            worst_erf = worst_erf.max((f64::from(erf(x)) - libm_erf(f64::from(x))).abs());
        }
        assert!(worst_exp < 3e-7, "exp relative error {worst_exp}");
        assert!(worst_erf < 5e-7, "erf absolute error {worst_erf}");
        assert_eq!(exp(-200.0), exp(-87.0));
        assert!(exp(-87.0) > 0.0 && exp(88.0).is_finite());
        assert!(erf(0.0).abs() < 3e-7);
        assert_eq!(erf(-1.5), -erf(1.5));
    }

    /// erf in f64: its Taylor series up to 3, the asymptotic series of erfc beyond.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        if a > 3.0 {
            let z = a * a;
            let erfc = (-z).exp() / (a * std::f64::consts::PI.sqrt()) * (1.0 - 1.0 / (2.0 * z) + 3.0 / (4.0 * z * z));
            return (1.0 - erfc).copysign(x);
        }
        let (mut term, mut total, mut k) = (x, x, 0f64);
        while term.abs() > 1e-18 {
            k += 1.0;
            term *= -x * x / k;
            total += term / (2.0 * k + 1.0);
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }

    /// Attention as written in the paper, in f64, one head at a time.
    fn naive_attention(qkv: &[f32], n: usize, len: usize, heads: usize, h: usize) -> Vec<f64> {
        let dh = h / heads;
        let at = |s: usize, p: usize, part: usize, head: usize, d: usize| {
            f64::from(qkv[(s * len + p) * 3 * h + part * h + head * dh + d])
        };
        let mut out = vec![0f64; n * len * h];
        for s in 0..n {
            for head in 0..heads {
                for i in 0..len {
                    let scores: Vec<f64> = (0..len)
                        .map(|j| {
                            (0..dh).map(|d| at(s, i, 0, head, d) * at(s, j, 1, head, d)).sum::<f64>()
                                / (dh as f64).sqrt()
                        })
                        .collect();
                    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
                    let total: f64 = e.iter().sum();
                    for d in 0..dh {
                        out[(s * len + i) * h + head * dh + d] =
                            (0..len).map(|j| e[j] / total * at(s, j, 2, head, d)).sum::<f64>();
                    }
                }
            }
        }
        out
    }

    #[test]
    fn attention_matches_the_definition() {
        // Head sizes with and without a partial block, lengths around a block.
        for (n, len, heads, h) in [(2, 5, 2, 24), (1, 9, 3, 36), (3, 8, 1, 16), (1, 1, 2, 20)] {
            let qkv: Vec<f32> = (0..n * len * 3 * h).map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * 1.5).collect();
            let got = attention(&qkv, n, len, heads, h);
            let want = naive_attention(&qkv, n, len, heads, h);
            let worst = got.iter().zip(&want).map(|(a, b)| (f64::from(*a) - b).abs()).fold(0f64, f64::max);
            assert!(worst < 1e-5, "n {n} len {len} heads {heads} h {h}: off by {worst}");
        }
    }

    #[test]
    fn reductions_equal_plain_sums() {
        let x: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin()).collect();
        let plain: f32 = x.iter().sum();
        assert!((sum(&x) - plain).abs() < 1e-5);
        let mut s = vec![1.0f32, 2.0, 3.0];
        softmax(&mut s);
        assert!((s.iter().sum::<f32>() - 1.0).abs() < 1e-6 && s[2] > s[1] && s[1] > s[0]);
    }
}
