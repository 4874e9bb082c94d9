//! Variants: stress-test rows generated from canonical samples (ingest →
//! **variants** → release / export). Each row is a [`Sample`] with
//! `parent_id`, `variant`, `variant_params` (canonical JSON), `prompt` (the
//! full text a harness sends) and `expected` (`answer` or `abstain`); its id
//! is `<parent_id>::<kind>[@param]`.
//!
//! One file per family:
//! - [`null`]: the image is replaced, the text is not (`no_image`,
//!   `white_image`, `noise_image`, `caption`) — *Seeing is not reasoning*;
//! - [`phantom`]: the image is absent, said or unsaid (`mirage`, `guess`,
//!   `phantom`, `phantom0`, `phantom0_video`) — *Mirage*;
//! - [`trap`]: looks the same, answer logic changes (`option_shuffle`,
//!   `unknown_option`, `distractor_swap@k`, `visual_substitution`,
//!   `gold_removed`) — the medical stress tests T3-T5.
//!
//! Guarantees of [`generate`]: every random choice comes from
//! [`crate::seed::rng_for`]`(seed, "variants.<kind>", parent id)`, so the
//! output is the same bytes whatever the thread count; rows of each kind are
//! sorted by [`id_cmp`]; a kind that does not apply to a sample skips it and
//! counts the reason — never an error.

// The crates below this one, under the module names the code uses.
use blindspot_core::{error, io, progress, sample, seed};

pub mod null;
pub mod phantom;
pub mod prompt;
pub mod trap;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::Value as J;

use crate::error::OnInvalid;
use crate::error::{Error, Location, Problem, Result, did_you_mean};
use crate::sample::{AnswerFormat, Sample, id_cmp};

pub use prompt::{harness_question, render_prompt};

/// One stress-test condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    NoImage,
    WhiteImage,
    NoiseImage,
    Caption,
    Mirage,
    Guess,
    Phantom,
    Phantom0,
    OptionShuffle,
    /// CircularEval (MMBench): the options rotated by `k` positions, one kind
    /// per rotation; a question counts when every rotation is answered right.
    Circular(u32),
    UnknownOption,
    /// `k` distractors replaced by options of unrelated questions (k ≥ 1).
    DistractorSwap(u32),
    VisualSubstitution,
    GoldRemoved,
    /// The question's videos removed, the text alone (last: an image
    /// benchmark's kinds keep their order and names).
    NoVideo,
    /// The Phantom-0-style probes about a video that is never given.
    Phantom0Video,
}

/// The kinds' canonical names, in output order (`distractor_swap@k` stands for k = 1, 2, ...).
pub const KIND_NAMES: [&str; 16] = [
    "no_image",
    "white_image",
    "noise_image",
    "caption",
    "mirage",
    "guess",
    "phantom",
    "phantom0",
    "option_shuffle",
    "circular@k",
    "unknown_option",
    "distractor_swap@k",
    "visual_substitution",
    "gold_removed",
    "no_video",
    "phantom0_video",
];

/// The variant families, one source file each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Null,
    Phantom,
    Trap,
}

/// What a model should do with a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// Answer: the variant's `answer` is the gold.
    Answer,
    /// Say the question cannot be answered (the visual evidence is missing or void).
    Abstain,
}

impl Expected {
    pub fn as_str(self) -> &'static str {
        match self {
            Expected::Answer => "answer",
            Expected::Abstain => "abstain",
        }
    }
}

impl Kind {
    /// The canonical name, e.g. `no_image`, `distractor_swap@2`.
    pub fn name(self) -> String {
        match self {
            Kind::DistractorSwap(k) => format!("distractor_swap@{k}"),
            Kind::Circular(k) => format!("circular@{k}"),
            other => other.base_name().to_string(),
        }
    }

    /// The name without parameter.
    pub fn base_name(self) -> &'static str {
        match self {
            Kind::NoImage => "no_image",
            Kind::NoVideo => "no_video",
            Kind::WhiteImage => "white_image",
            Kind::NoiseImage => "noise_image",
            Kind::Caption => "caption",
            Kind::Mirage => "mirage",
            Kind::Guess => "guess",
            Kind::Phantom => "phantom",
            Kind::Phantom0 => "phantom0",
            Kind::Phantom0Video => "phantom0_video",
            Kind::OptionShuffle => "option_shuffle",
            Kind::Circular(_) => "circular",
            Kind::UnknownOption => "unknown_option",
            Kind::DistractorSwap(_) => "distractor_swap",
            Kind::VisualSubstitution => "visual_substitution",
            Kind::GoldRemoved => "gold_removed",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Kind::NoImage | Kind::NoVideo | Kind::WhiteImage | Kind::NoiseImage | Kind::Caption => Family::Null,
            Kind::Mirage | Kind::Guess | Kind::Phantom | Kind::Phantom0 | Kind::Phantom0Video => Family::Phantom,
            _ => Family::Trap,
        }
    }

    /// The behaviour a robust model shows on this kind.
    pub fn expected(self) -> Expected {
        match self {
            Kind::NoImage
            | Kind::NoVideo
            | Kind::WhiteImage
            | Kind::NoiseImage
            | Kind::Mirage
            | Kind::Phantom
            | Kind::Phantom0
            | Kind::Phantom0Video => Expected::Abstain,
            _ => Expected::Answer,
        }
    }

    /// What a published config of this kind holds (`rows` rows), for the
    /// release's config table.
    pub fn config_description(self, rows: usize) -> String {
        let name = self.name();
        let expected = self.expected().as_str();
        match self {
            // Not derived from the benchmark: the bundled probe bank.
            Kind::Phantom0 => format!(
                "Variant `{name}`: a standalone Phantom-0-style probe set of {rows} open-ended questions about an \
                 image that is never given; bundled with blindspot, the same for every benchmark and not derived \
                 from this one's questions (expected behaviour: {expected})."
            ),
            Kind::Phantom0Video => format!(
                "Variant `{name}`: a standalone Phantom-0-style probe set of {rows} open-ended questions about a \
                 video that is never given; bundled with blindspot, the same for every video benchmark and not \
                 derived from this one's questions (expected behaviour: {expected})."
            ),
            _ => format!("Variant `{name}` of every applicable question (expected behaviour: {expected})."),
        }
    }

    /// The config a release and the exports publish this kind's rows in:
    /// every CircularEval rotation in [`CIRCULAR_CONFIG`], else the name with
    /// `@` as `-` (`distractor_swap@2` → `distractor_swap-2`).
    pub fn config_name(self) -> String {
        match self {
            Kind::Circular(_) => CIRCULAR_CONFIG.into(),
            other => other.name().replace('@', "-"),
        }
    }

    /// Whether rows of this kind carry no image (exporters drop the image column).
    pub fn is_image_free(self) -> bool {
        matches!(
            self,
            Kind::NoImage
                | Kind::NoVideo
                | Kind::Caption
                | Kind::Mirage
                | Kind::Guess
                | Kind::Phantom
                | Kind::Phantom0
                | Kind::Phantom0Video
        )
    }

    /// The seed stage of this kind: `variants.<name>`.
    pub fn stage(self) -> String {
        format!("variants.{}", self.name())
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// The one config that holds every CircularEval rotation (`circular@k` rows),
/// in a release and in both exports; [`ROTATION_COLUMN`] gives each row's k.
pub const CIRCULAR_CONFIG: &str = "circular";

/// The column of the [`CIRCULAR_CONFIG`] config holding each row's rotation k.
pub const ROTATION_COLUMN: &str = "rotation";

/// What the `circular` config holds (`rows` rows, `rotations` kinds), for the
/// release's config table.
pub fn circular_config_description(rows: usize, rotations: usize) -> String {
    format!(
        "CircularEval (MMBench): every rotation of every applicable multiple-choice question, {rows} rows over \
         {rotations} rotations; the `{ROTATION_COLUMN}` column holds the rotation k (variant `circular@k`: option i \
         is option (i + k) mod n of the question). A question counts as right only when every rotation is \
         (expected behaviour: answer)."
    )
}

/// The CircularEval rotation of a row (variant `circular@k` → k); None for
/// every other row.
pub fn rotation(s: &Sample) -> Option<u32> {
    s.variant.as_deref()?.strip_prefix("circular@")?.parse().ok()
}

fn rotation_value(s: &Sample) -> Option<i32> {
    rotation(s).and_then(|k| i32::try_from(k).ok())
}

/// The columns the [`CIRCULAR_CONFIG`] config's files have after the
/// canonical ones, in a release and in an lmms-eval export.
pub const CIRCULAR_COLUMNS: &[crate::io::parquet::IntColumn] =
    &[crate::io::parquet::IntColumn { name: ROTATION_COLUMN, value: rotation_value }];

/// A kind as the user names it: one kind, or `distractor_swap` for every k
/// the data allows (1 .. largest option count − 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KindSel {
    One(Kind),
    /// `no_video` in the default selection: only when some question has a
    /// video, so an image benchmark's variants are as they were.
    NoVideoIfAny,
    /// `phantom0_video` in the default selection: only when some question
    /// has a video, as `no_video`.
    Phantom0VideoIfAny,
    DistractorSwapAll,
    /// `circular`: every rotation the data allows (0 .. most options − 1).
    CircularAll,
}

impl KindSel {
    /// Every kind, `distractor_swap` for all k: the default selection.
    pub fn all() -> Vec<KindSel> {
        vec![
            KindSel::One(Kind::NoImage),
            KindSel::NoVideoIfAny,
            KindSel::One(Kind::WhiteImage),
            KindSel::One(Kind::NoiseImage),
            KindSel::One(Kind::Caption),
            KindSel::One(Kind::Mirage),
            KindSel::One(Kind::Guess),
            KindSel::One(Kind::Phantom),
            KindSel::One(Kind::Phantom0),
            KindSel::Phantom0VideoIfAny,
            KindSel::One(Kind::OptionShuffle),
            KindSel::CircularAll,
            KindSel::One(Kind::UnknownOption),
            KindSel::DistractorSwapAll,
            KindSel::One(Kind::VisualSubstitution),
            KindSel::One(Kind::GoldRemoved),
        ]
    }

    pub fn name(self) -> String {
        match self {
            KindSel::One(k) => k.name(),
            KindSel::NoVideoIfAny => Kind::NoVideo.name(),
            KindSel::Phantom0VideoIfAny => Kind::Phantom0Video.name(),
            KindSel::DistractorSwapAll => "distractor_swap".into(),
            KindSel::CircularAll => "circular".into(),
        }
    }
}

/// The list of valid kind names, for messages.
pub fn valid_kinds() -> String {
    let mut names: Vec<&str> = KIND_NAMES.to_vec();
    names.insert(11, "distractor_swap");
    names.insert(9, "circular");
    names.join(", ")
}

/// Parses a kind name: a canonical name, `distractor_swap` or `distractor_swap@k` (k ≥ 1).
/// The error says what is valid and, for a misspelling, what was meant.
pub fn parse_kind(s: &str) -> std::result::Result<KindSel, String> {
    let s = s.trim();
    let simple = [
        Kind::NoImage,
        Kind::WhiteImage,
        Kind::NoiseImage,
        Kind::Caption,
        Kind::Mirage,
        Kind::Guess,
        Kind::Phantom,
        Kind::Phantom0,
        Kind::OptionShuffle,
        Kind::UnknownOption,
        Kind::VisualSubstitution,
        Kind::GoldRemoved,
        Kind::NoVideo,
        Kind::Phantom0Video,
    ];
    if let Some(k) = simple.iter().find(|k| k.base_name() == s) {
        return Ok(KindSel::One(*k));
    }
    if s == "distractor_swap" {
        return Ok(KindSel::DistractorSwapAll);
    }
    if s == "circular" {
        return Ok(KindSel::CircularAll);
    }
    if let Some(k) = s.strip_prefix("circular@") {
        return match k.parse::<u32>() {
            Ok(k) => Ok(KindSel::One(Kind::Circular(k))),
            _ => Err(format!("\"{s}\": k in circular@k is the rotation, a whole number from 0 (e.g. circular@1)")),
        };
    }
    if let Some(k) = s.strip_prefix("distractor_swap@") {
        return match k.parse::<u32>() {
            Ok(k) if k >= 1 => Ok(KindSel::One(Kind::DistractorSwap(k))),
            _ => Err(format!(
                "\"{s}\": k in distractor_swap@k must be a whole number of distractors, at least 1 (e.g. distractor_swap@2)"
            )),
        };
    }
    let mut msg = format!("unknown variant kind \"{s}\"; valid kinds: {}", valid_kinds());
    let candidates: Vec<&str> = simple.iter().map(|k| k.base_name()).chain(["distractor_swap", "circular"]).collect();
    if let Some(m) = did_you_mean(s, candidates) {
        msg.push_str(&format!(" (did you mean \"{m}\"?)"));
    }
    Err(msg)
}

/// Where `caption` variants take their captions from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptionSource {
    /// A JSON file holding an object `{sample id: caption}`, at `key` (a
    /// dotted path, e.g. ScienceQA's `captions`) or at the top level.
    File { path: PathBuf, key: Option<String> },
    /// A `meta` field of each sample.
    Meta(String),
}

/// Validated `[variants]` settings (or `blindspot variants` flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantsConfig {
    /// Kinds to generate (default: all).
    pub kinds: Vec<KindSel>,
    /// The seed of every random choice, resolved once with the settings
    /// (`[variants] seed`, else `[dataset] seed`, else 42).
    pub seed: u64,
    pub captions: Option<CaptionSource>,
    /// A caption naming an unknown sample id: an error, or skipped and counted.
    pub on_invalid: OnInvalid,
}

impl Default for VariantsConfig {
    fn default() -> Self {
        VariantsConfig {
            kinds: KindSel::all(),
            seed: blindspot_core::context::DEFAULT_SEED,
            captions: None,
            on_invalid: OnInvalid::Error,
        }
    }
}

/// The rows of one kind, with why samples were skipped.
#[derive(Debug, Clone)]
pub struct KindRows {
    pub kind: Kind,
    /// Sorted by id.
    pub rows: Vec<Sample>,
    /// Reason → number of samples skipped for it.
    pub skipped: BTreeMap<String, usize>,
}

/// Everything [`generate`] produced.
#[derive(Debug, Clone)]
pub struct Variants {
    /// The seed used (the config's).
    pub seed: u64,
    /// One entry per concrete kind, in kind order.
    pub kinds: Vec<KindRows>,
    /// Problems tolerated under `on-invalid = "skip"` (e.g. captions of unknown ids), with counts.
    pub warnings: Vec<String>,
}

impl Variants {
    pub fn get(&self, kind: Kind) -> Option<&KindRows> {
        self.kinds.iter().find(|k| k.kind == kind)
    }

    /// Counts per kind and skip reasons, as `summary.json` lists them.
    pub fn summary(&self) -> Vec<(String, KindSummary)> {
        self.kinds
            .iter()
            .map(|k| {
                let summary = KindSummary {
                    rows: k.rows.len(),
                    skipped: k.skipped.values().sum(),
                    skipped_by_reason: k.skipped.clone(),
                    expected: k.kind.expected().as_str(),
                };
                (k.kind.name(), summary)
            })
            .collect()
    }
}

/// One kind's counts in `blindspot variants`' `summary.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindSummary {
    pub rows: usize,
    /// Samples the kind does not apply to.
    pub skipped: usize,
    /// Reason -> samples skipped for it.
    pub skipped_by_reason: BTreeMap<String, usize>,
    /// What a model should answer to the kind's rows (`answer`, `abstain`, ...).
    pub expected: &'static str,
}

/// Why a kind does not apply to a sample (counted, never an error).
pub type Skip = &'static str;

/// Shared, read-only inputs of every kind.
pub struct Ctx<'a> {
    pub samples: &'a [&'a Sample],
    pub seed: u64,
    pub captions: HashMap<String, String>,
    pub caption_source: bool,
}

/// Generates the configured variants of `samples` (sorted canonical samples,
/// as ingest returns them) with `cfg.seed`.
/// Errors only on invalid user input (a caption file naming unknown ids, unless
/// `on_invalid` is skip; noise images past [`null::MAX_NOISE_BYTES`]); kinds
/// that do not apply are skipped and counted.
pub fn generate(samples: &[Sample], cfg: &VariantsConfig) -> Result<Variants> {
    generate_from(&samples.iter().collect::<Vec<_>>(), cfg)
}

/// [`generate`] over references to the samples (a build's kept questions, not copied).
pub fn generate_from(samples: &[&Sample], cfg: &VariantsConfig) -> Result<Variants> {
    let seed = cfg.seed;
    let kinds = expand_kinds(&cfg.kinds, samples.iter().copied());
    let mut warnings = Vec::new();
    let (captions, caption_source) = if kinds.contains(&Kind::Caption) {
        match &cfg.captions {
            Some(src) => (null::load_captions(src, samples, cfg.on_invalid, &mut warnings)?, true),
            None => {
                warnings.push("caption: no caption source given ([variants.captions]); every sample skipped".into());
                (HashMap::new(), false)
            }
        }
    } else {
        (HashMap::new(), false)
    };
    let ctx = Ctx { samples, seed, captions, caption_source };
    let pool = kinds.iter().any(|k| matches!(k, Kind::DistractorSwap(_))).then(|| trap::OptionPool::new(samples));
    let partners = kinds.contains(&Kind::VisualSubstitution).then(|| trap::Partners::new(samples));
    let whites = kinds.contains(&Kind::WhiteImage).then(|| null::WhiteCache::new(samples));
    if kinds.contains(&Kind::NoiseImage) {
        null::check_noise_budget(samples)?;
    }

    let mut out = Vec::with_capacity(kinds.len());
    let bar = crate::progress::bar(kinds.len() as u64, "variants");
    for kind in kinds {
        bar.inc(1);
        let rows = if kind == Kind::Phantom0 {
            KindRows { kind, rows: phantom::phantom0_rows()?, skipped: BTreeMap::new() }
        } else if kind == Kind::Phantom0Video {
            KindRows { kind, rows: phantom::phantom0_video_rows()?, skipped: BTreeMap::new() }
        } else {
            let one = |s: &Sample| -> std::result::Result<Sample, Skip> {
                match kind {
                    Kind::NoImage => null::no_image(s),
                    Kind::NoVideo => null::no_video(s),
                    Kind::WhiteImage => null::white_image(s, whites.as_ref().expect("built for white_image")),
                    Kind::NoiseImage => null::noise_image(s, &ctx),
                    Kind::Caption => null::caption(s, &ctx),
                    Kind::Mirage => phantom::mirage(s),
                    Kind::Guess => phantom::guess(s),
                    Kind::Phantom => phantom::phantom(s),
                    Kind::Phantom0 | Kind::Phantom0Video => unreachable!("handled above"),
                    Kind::OptionShuffle => trap::option_shuffle(s, &ctx),
                    Kind::Circular(k) => trap::circular(s, k),
                    Kind::UnknownOption => trap::unknown_option(s, &ctx),
                    Kind::DistractorSwap(k) => {
                        trap::distractor_swap(s, k, &ctx, pool.as_ref().expect("built for distractor_swap"))
                    }
                    Kind::VisualSubstitution => {
                        trap::visual_substitution(s, &ctx, partners.as_ref().expect("built for visual_substitution"))
                    }
                    Kind::GoldRemoved => trap::gold_removed(s),
                }
            };
            let results: Vec<std::result::Result<Sample, Skip>> = samples.par_iter().map(|s| one(s)).collect();
            let mut rows = Vec::new();
            let mut skipped = BTreeMap::new();
            for r in results {
                match r {
                    Ok(row) => rows.push(row),
                    Err(reason) => *skipped.entry(reason.to_string()).or_insert(0) += 1,
                }
            }
            rows.sort_by(|a, b| id_cmp(&a.id, &b.id));
            KindRows { kind, rows, skipped }
        };
        check_rows(&rows)?;
        out.push(rows);
    }
    bar.finish_and_clear();
    Ok(Variants { seed, kinds: out, warnings })
}

/// Concrete kinds, deduplicated, in kind order; `distractor_swap` becomes
/// `@1 ..= @(most options − 1)` (at least `@1`, so its skips are reported).
pub fn expand_kinds<'a>(sel: &[KindSel], samples: impl IntoIterator<Item = &'a Sample>) -> Vec<Kind> {
    let samples: Vec<&Sample> = samples.into_iter().collect();
    let any_video = samples.iter().any(|s| !s.videos.is_empty());
    let max_options = samples
        .iter()
        .filter(|s| s.answer_format == AnswerFormat::MultipleChoice)
        .map(|s| s.options.len())
        .max()
        .unwrap_or(0);
    let mut kinds: Vec<Kind> = Vec::new();
    for s in sel {
        match s {
            KindSel::One(k) => kinds.push(*k),
            KindSel::NoVideoIfAny => {
                if any_video {
                    kinds.push(Kind::NoVideo)
                }
            }
            KindSel::Phantom0VideoIfAny => {
                if any_video {
                    kinds.push(Kind::Phantom0Video)
                }
            }
            KindSel::DistractorSwapAll => {
                let top = max_options.saturating_sub(1).max(1) as u32;
                kinds.extend((1..=top).map(Kind::DistractorSwap));
            }
            KindSel::CircularAll => kinds.extend((0..max_options as u32).map(Kind::Circular)),
        }
    }
    kinds.sort();
    kinds.dedup();
    kinds
}

/// The invariants every kind's rows keep; a violation is a bug (exit 2).
fn check_rows(k: &KindRows) -> Result<()> {
    let name = k.kind.name();
    for (i, r) in k.rows.iter().enumerate() {
        let bug = |what: &str| Err(Error::Bug(format!("variant {name}: row {}: {what}", r.id)));
        let Some(parent) = &r.parent_id else { return bug("no parent_id") };
        if r.id != format!("{parent}::{name}") {
            return bug("id is not <parent_id>::<kind>");
        }
        if r.variant.as_deref() != Some(name.as_str()) || r.prompt.is_none() || r.expected.is_none() {
            return bug("variant, prompt or expected missing");
        }
        if r.answer_format == AnswerFormat::MultipleChoice {
            let gold = r.answer_index.and_then(|i| usize::try_from(i).ok()).and_then(|i| r.options.get(i));
            if gold != Some(&r.answer) {
                return bug("gold is not among the options");
            }
        }
        if i > 0 && id_cmp(&k.rows[i - 1].id, &r.id) != std::cmp::Ordering::Less {
            return bug("rows are not sorted by id or ids repeat");
        }
    }
    Ok(())
}

/// A copy of `parent` as a row of `kind`: id, parent id, kind, params set;
/// prompt and expected rendered from the result by the caller via [`finish`].
pub fn derive(parent: &Sample, kind: Kind, params: J) -> Sample {
    let mut s = parent.clone();
    s.id = format!("{}::{}", parent.id, kind.name());
    s.parent_id = Some(parent.id.clone());
    s.variant = Some(kind.name());
    s.variant_params = Some(canonical_json(&params));
    s.prompt = None;
    s.expected = Some(kind.expected().as_str().to_string());
    s
}

/// Renders the row's prompt (after its fields are final).
pub fn finish(mut s: Sample) -> Sample {
    s.prompt = Some(render_prompt(&s));
    s
}

/// JSON with object keys sorted at every level and no whitespace.
pub fn canonical_json(v: &J) -> String {
    fn sort(v: &J) -> J {
        match v {
            J::Object(m) => {
                let sorted: BTreeMap<&String, J> = m.iter().map(|(k, v)| (k, sort(v))).collect();
                J::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            J::Array(a) => J::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// Questions and yes/no answers compared for equality: trimmed, lowercase,
/// inner whitespace collapsed.
pub fn norm(s: &str) -> String {
    option_key(s).to_lowercase()
}

/// Options compared for equality: trimmed, inner whitespace collapsed, case
/// kept — ScienceQA asks which of "Dear Pablo," and "dear Pablo," is right.
pub fn option_key(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A located problem with a caption source.
pub fn caption_problem(loc: Location, msg: impl Into<String>) -> Problem {
    Problem::new(loc, msg).field("variants.captions")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_name_round_trip() {
        for name in KIND_NAMES.iter().filter(|n| !n.contains('@')) {
            let k = parse_kind(name).unwrap();
            assert_eq!(k.name(), *name);
        }
        assert_eq!(parse_kind("distractor_swap@3").unwrap(), KindSel::One(Kind::DistractorSwap(3)));
        assert_eq!(parse_kind("distractor_swap").unwrap(), KindSel::DistractorSwapAll);
        assert!(parse_kind("distractor_swap@0").is_err());
        let e = parse_kind("white_imag").unwrap_err();
        assert!(e.contains("did you mean \"white_image\""), "{e}");
        assert!(e.contains("gold_removed") && e.contains("distractor_swap@k"), "{e}");
    }

    #[test]
    fn canonical_json_sorts_keys() {
        let v = serde_json::json!({"b": 1, "a": {"d": [1, {"z": 0, "y": 1}], "c": "x"}});
        assert_eq!(canonical_json(&v), r#"{"a":{"c":"x","d":[1,{"y":1,"z":0}]},"b":1}"#);
    }

    #[test]
    fn distractor_swap_expands_to_the_data() {
        let mut s = Sample::new("1", "q", "a");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["a".into(), "b".into(), "c".into(), "d".into()];
        let kinds = expand_kinds(&[KindSel::DistractorSwapAll, KindSel::One(Kind::NoImage)], &[s]);
        assert_eq!(
            kinds,
            vec![Kind::NoImage, Kind::DistractorSwap(1), Kind::DistractorSwap(2), Kind::DistractorSwap(3)]
        );
        assert_eq!(expand_kinds(&[KindSel::DistractorSwapAll], &[]), vec![Kind::DistractorSwap(1)]);
    }
}

#[cfg(test)]
mod video_tests {
    use super::*;
    use crate::sample::{ImageRef, VideoRef};

    fn video_question(id: &str, frames: usize) -> Sample {
        let mut s = Sample::new(id, "What happens in the video?", "B");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["A".into(), "B".into()];
        s.answer_index = Some(1);
        let frames: Vec<ImageRef> = (0..frames)
            .map(|k| ImageRef {
                path: Some(format!("{id}_{k}.png")),
                sha256: Some(format!("{k:064}")),
                ..Default::default()
            })
            .collect();
        s.videos.push(VideoRef {
            path: (frames.is_empty()).then(|| format!("{id}.mp4")),
            sha256: Some("f".repeat(64)),
            width: Some(8),
            height: Some(6),
            frames,
            ..Default::default()
        });
        s
    }

    fn rows(v: &Variants, kind: Kind) -> &KindRows {
        v.kinds.iter().find(|k| k.kind == kind).unwrap_or_else(|| panic!("no {kind} rows"))
    }

    /// The default selection gives `no_video` exactly when a question has a
    /// video; its rows carry the text alone and expect abstention; the traps
    /// keep the video; the phantom family drops it.
    #[test]
    fn video_questions_get_video_variants() {
        let (file, frames) = (video_question("1", 0), video_question("2", 3));
        let samples = [&file, &frames];
        let v = generate_from(&samples, &VariantsConfig { seed: 7, ..Default::default() }).unwrap();
        let nv = rows(&v, Kind::NoVideo);
        assert_eq!(nv.rows.len(), 2);
        assert!(nv.rows.iter().all(|r| r.videos.is_empty() && r.images.is_empty()));
        assert_eq!(nv.rows[0].expected.as_deref(), Some("abstain"));
        assert!(rows(&v, Kind::OptionShuffle).rows.iter().all(|r| r.videos.len() == 1));
        for kind in [Kind::Mirage, Kind::Guess, Kind::Phantom] {
            let r = rows(&v, kind);
            assert_eq!(r.rows.len(), 2, "{kind}");
            assert!(r.rows.iter().all(|r| r.videos.is_empty() && r.images.is_empty()), "{kind}");
        }
        // White and noise: the frames are blanked at the video's size, no image added;
        // a video file is skipped, counted.
        for kind in [Kind::WhiteImage, Kind::NoiseImage] {
            let r = rows(&v, kind);
            assert_eq!(r.rows.len(), 1, "{kind}");
            assert_eq!(r.skipped.get(super::null::VIDEO_FILE_SKIP), Some(&1), "{kind}: {:?}", r.skipped);
            let row = &r.rows[0];
            assert!(row.images.is_empty());
            let video = &row.videos[0];
            assert_eq!(video.frames.len(), 3);
            assert!(video.frames.iter().all(|f| (f.width, f.height) == (Some(8), Some(6)) && f.bytes.is_some()));
            assert_eq!(video.sha256.as_deref(), Some(VideoRef::frames_sha256(&video.frames).as_str()));
        }
        let noise = &rows(&v, Kind::NoiseImage).rows[0].videos[0].frames;
        assert_ne!(noise[0].sha256, noise[1].sha256);
        let again = generate_from(&samples, &VariantsConfig { seed: 7, ..Default::default() }).unwrap();
        assert_eq!(rows(&again, Kind::NoiseImage).rows, rows(&v, Kind::NoiseImage).rows);
        // An image benchmark gets no `no_video` config.
        let image = Sample::new("3", "q", "a");
        assert!(expand_kinds(&KindSel::all(), [&image]).iter().all(|k| *k != Kind::NoVideo));
    }

    /// A video benchmark's default selection has the video probe set beside
    /// the image one: 100 questions asserting a video that is not given,
    /// expected to be declined, in a config of their own; an image
    /// benchmark's selection has no video probes.
    #[test]
    fn video_questions_get_the_phantom0_video_probes() {
        let video = video_question("1", 0);
        let v = generate_from(&[&video], &VariantsConfig { seed: 7, ..Default::default() }).unwrap();
        let probes = rows(&v, Kind::Phantom0Video);
        assert_eq!(probes.rows.len(), 100);
        assert!(probes.rows.iter().all(|r| r.expected.as_deref() == Some("abstain") && r.videos.is_empty()));
        assert_eq!(
            probes.rows[0].prompt.as_deref(),
            Some("What does the person in this video do right after opening the door?")
        );
        assert_eq!(rows(&v, Kind::Phantom0).rows.len(), 200);
        assert_eq!(Kind::Phantom0Video.config_name(), "phantom0_video");
        assert_eq!(parse_kind("phantom0_video"), Ok(KindSel::One(Kind::Phantom0Video)));
        let image = Sample::new("3", "q", "a");
        assert!(expand_kinds(&KindSel::all(), [&image]).iter().all(|k| *k != Kind::Phantom0Video));
    }
}
