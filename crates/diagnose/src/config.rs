//! Settings of a diagnose run: folds, repeats, trees, grouping of related
//! questions, the method (TsT-RF, TsT-Embed or both) and how their scores combine.

use super::run::normalize;
use crate::ml::features::FeatureConfig;
use crate::sample::image_hash::Hashes;
use crate::sample::{MraRule, NumericScoring, Sample};

/// How folds keep related questions together.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum GroupBy {
    /// Questions on the same image (first image's sha256, else its path).
    Image,
    /// Questions on near-duplicate images: the first images' perceptual hashes
    /// (`phash` and `dhash`) both within this many bits of 64 make two images
    /// near, and a cluster is a set of images every two of which are near
    /// (complete linkage among the questions grouped together). A question whose
    /// image has no hash, or a flat one (a solid or blank image), is grouped as
    /// with [`GroupBy::Image`].
    ImageCluster(u32),
    /// Questions on the same video (first video's sha256, else its path): a
    /// video benchmark asks many questions of each video.
    Video,
    /// Questions with the same text (and context): contrastive sets ask one
    /// question of two images with opposite answers, and a held-out twin must
    /// not be predicted from its sibling.
    Question,
    /// Questions sharing a `meta` field's value.
    Meta(String),
}

impl GroupBy {
    /// Parses `image`, `image-cluster`, `image-cluster:BITS`, `video`, `question` or `meta:FIELD`.
    pub fn parse(s: &str) -> std::result::Result<GroupBy, String> {
        use crate::sample::image_hash::{DEFAULT_THRESHOLD, MAX_THRESHOLD};
        match s.split_once(':') {
            None if s == "image" => Ok(GroupBy::Image),
            None if s == "image-cluster" => Ok(GroupBy::ImageCluster(DEFAULT_THRESHOLD)),
            None if s == "video" => Ok(GroupBy::Video),
            None if s == "question" => Ok(GroupBy::Question),
            Some(("image-cluster", bits)) => match bits.parse::<u32>() {
                Ok(t) if t <= MAX_THRESHOLD => Ok(GroupBy::ImageCluster(t)),
                _ => Err(format!(
                    "group-by \"{s}\": the Hamming threshold \"{bits}\" is not a whole number of bits from 0 to \
                     {MAX_THRESHOLD} (default {DEFAULT_THRESHOLD})"
                )),
            },
            Some(("meta", field)) if !field.is_empty() => Ok(GroupBy::Meta(field.to_string())),
            _ => Err(format!(
                "group-by \"{s}\" is not \"image\", \"image-cluster\", \"image-cluster:BITS\", \"video\", \
                 \"question\" or \"meta:FIELD\""
            )),
        }
    }

    /// The setting as written in a pipeline file.
    pub fn name(&self) -> String {
        match self {
            GroupBy::Image => "image".to_string(),
            GroupBy::ImageCluster(t) => format!("image-cluster:{t}"),
            GroupBy::Video => "video".to_string(),
            GroupBy::Question => "question".to_string(),
            GroupBy::Meta(f) => format!("meta:{f}"),
        }
    }

    /// The group of one question on its own (near-duplicate clusters need the
    /// others: see [`GroupBy::keys`]).
    fn key(&self, s: &Sample) -> String {
        match self {
            GroupBy::Image | GroupBy::ImageCluster(_) => s
                .images
                .first()
                .and_then(|i| i.sha256.clone().or_else(|| i.path.clone()))
                .unwrap_or_else(|| format!("id:{}", s.id)),
            GroupBy::Video => {
                s.videos.first().and_then(crate::sample::VideoRef::key).unwrap_or_else(|| format!("id:{}", s.id))
            }
            GroupBy::Question => {
                format!("{}\u{1f}{}", normalize(&s.question), s.context.as_deref().map(normalize).unwrap_or_default())
            }
            GroupBy::Meta(field) => s.meta.get(field).cloned().unwrap_or_else(|| format!("id:{}", s.id)),
        }
    }

    /// The group of each of `samples`, in order. Near-duplicate clusters are
    /// found among these samples' images, so the keys of a subset may join
    /// fewer questions than those of the whole set; a cluster's key is the
    /// `image` key of one of its questions.
    pub fn keys<'a>(&self, samples: impl IntoIterator<Item = &'a Sample>) -> Vec<String> {
        let samples: Vec<&Sample> = samples.into_iter().collect();
        let &GroupBy::ImageCluster(threshold) = self else {
            return samples.iter().map(|s| self.key(s)).collect();
        };
        // A flat image (solid, blank) is near nothing: it keeps its own key.
        let hashes: Vec<Option<Hashes>> =
            first_image_hashes(&samples).into_iter().map(|h| h.filter(|h| !h.is_flat())).collect();
        let mut distinct: Vec<Hashes> = hashes.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let roots = crate::sample::image_hash::cluster_roots(&distinct, threshold);
        // A cluster is named by the smallest image key among its questions, so
        // where nothing joins, the groups (and the folds) are `image`'s.
        let own: Vec<String> = samples.iter().map(|s| self.key(s)).collect();
        let mut name: std::collections::HashMap<usize, &str> = std::collections::HashMap::new();
        let root_of = |h: &Hashes| roots[distinct.binary_search(h).unwrap_or(0)];
        for (k, h) in own.iter().zip(&hashes) {
            if let Some(h) = h {
                let e = name.entry(root_of(h)).or_insert(k);
                if k.as_str() < *e {
                    *e = k;
                }
            }
        }
        own.iter()
            .zip(&hashes)
            .map(|(k, h)| h.as_ref().map_or_else(|| k.clone(), |h| name[&root_of(h)].to_string()))
            .collect()
    }
}

/// Each sample's first image's perceptual hashes, when both read.
fn first_image_hashes(samples: &[&Sample]) -> Vec<Option<Hashes>> {
    samples
        .iter()
        .map(|s| s.images.first().and_then(|i| Hashes::read(i.phash.as_deref(), i.dhash.as_deref())))
        .collect()
}

/// How near-duplicate images joined the questions of a set into clusters.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImageClusterCount {
    /// The Hamming threshold, in bits of 64.
    pub threshold: u32,
    /// Distinct images (by sha256, else path) that are some question's first image.
    pub images: usize,
    /// Of those, images with a perceptual hash.
    pub hashed: usize,
    /// Clusters that join more than one distinct image.
    pub joining: usize,
    /// Images in those clusters.
    pub images_joined: usize,
    /// TsT-RF's blind accuracy (weighted) with the folds grouped by image
    /// instead, to compare with the run's own; measured only when some cluster
    /// joins images (otherwise the groups, and the folds, are the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blind_grouped_by_image: Option<f64>,
}

impl ImageClusterCount {
    /// The clusters of `samples`' first images at `threshold`.
    pub fn of(samples: &[&Sample], threshold: u32) -> ImageClusterCount {
        let image_keys = GroupBy::Image.keys(samples.iter().copied());
        let cluster_keys = GroupBy::ImageCluster(threshold).keys(samples.iter().copied());
        let hashes = first_image_hashes(samples);
        let mut per_cluster: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> = Default::default();
        let mut hashed = std::collections::BTreeSet::new();
        for ((image, cluster), h) in image_keys.iter().zip(&cluster_keys).zip(&hashes) {
            if image.starts_with("id:") {
                continue;
            }
            per_cluster.entry(cluster).or_default().insert(image);
            if h.is_some() {
                hashed.insert(image.as_str());
            }
        }
        let joining: Vec<usize> = per_cluster.values().map(|v| v.len()).filter(|&n| n > 1).collect();
        ImageClusterCount {
            threshold,
            images: per_cluster.values().map(|v| v.len()).sum(),
            hashed: hashed.len(),
            joining: joining.len(),
            images_joined: joining.iter().sum(),
            blind_grouped_by_image: None,
        }
    }
}

/// Settings of a TsT-RF run (defaults: the protocol's).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DiagnoseConfig {
    pub folds: usize,
    pub repeats: usize,
    pub seed: u64,
    pub group_by: Option<GroupBy>,
    /// Trees of each classification forest.
    pub trees: usize,
    /// Trees of each regression forest.
    pub regression_trees: usize,
    /// How a numeric question's blind prediction is scored: the benchmark's own
    /// scorer, one setting for every stage (default exact; `exact` snaps the
    /// regression to the nearest training answer; MRA is the TsT protocol's).
    pub numeric: NumericScoring,
    pub mra: MraRule,
    /// Question types with fewer questions (in one format) share one pooled
    /// model per format, with the type as a feature: k-fold CV on a handful
    /// of questions only measures noise.
    pub min_group: usize,
    pub features: FeatureConfig,
    /// Which blind model scores s(x): TsT-RF, TsT-Embed or both combined.
    pub method: Method,
    /// How `Method::Both` combines the two s(x).
    pub combine: Combine,
    /// The label-permutation null the verdict and IBP's gate compare with.
    pub null: super::null::NullConfig,
    /// Where `folds` was set by the user; `None` when the default applies. It
    /// changes no result (so it is no part of the stage key), only whether
    /// folds outnumbering the questions is the user's mistake.
    #[serde(skip)]
    pub folds_given: Option<FoldsGiven>,
    /// Outside scores to combine into s(x), as the settings name them (read once
    /// the questions are known: [`DiagnoseConfig::load_outside`]).
    #[serde(skip)]
    pub outside_source: Option<super::outside::OutsideSource>,
    /// The outside scores read and checked; their file's sha256 and the rule are
    /// part of the settings' identity (a stage key).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "outside_identity")]
    pub outside: Option<std::sync::Arc<super::outside::OutsideScores>>,
}

/// The outside scores as part of the settings: their identity (file hash, rule).
fn outside_identity<S: serde::Serializer>(
    o: &Option<std::sync::Arc<super::outside::OutsideScores>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&o.as_deref(), s)
}

/// Where a user set the number of folds.
#[derive(Debug, Clone)]
pub enum FoldsGiven {
    /// `[diagnose] folds` in a pipeline file, at this key.
    Pipeline(crate::error::Location),
    /// `--folds` on the command line.
    Flag,
}

impl DiagnoseConfig {
    /// Folds the user set must not outnumber the `questions` diagnosed: every
    /// held-out fold needs a question. The default is not an error: it is
    /// lowered to each group's size ([`super::folds_used`] says to what), which
    /// the reports state per group.
    pub fn check_folds(&self, questions: usize) -> crate::error::Result<()> {
        use crate::error::{Error, Location, Problem};
        let Some(given) = &self.folds_given else { return Ok(()) };
        if self.folds <= questions {
            return Ok(());
        }
        let (k, n) = (self.folds, questions);
        let what = match given {
            FoldsGiven::Pipeline(_) => "folds",
            FoldsGiven::Flag => "--folds",
        };
        let help = if n >= 2 {
            format!(
                "each held-out fold needs a question: set {what} to at most {n}, or leave it out (the default, {} folds, \
                 is lowered to a group's size where a group is smaller)",
                DiagnoseConfig::default().folds
            )
        } else {
            format!("cross-validation needs at least 2 questions: diagnose a benchmark with more, or leave {what} out")
        };
        let problem = match given {
            FoldsGiven::Pipeline(at) => {
                Problem::new(at.clone(), format!("must be at most the number of questions diagnosed ({n}); found {k}"))
                    .field("diagnose.folds")
            }
            FoldsGiven::Flag => Problem::new(
                Location::file("command line"),
                format!("--folds {k} is more than the {n} questions diagnosed"),
            ),
        };
        Err(Error::one(problem.help(help)))
    }

    /// Reads and checks the outside scores the settings name against `samples`
    /// (the questions this run diagnoses); nothing to do without any.
    pub fn load_outside(&mut self, samples: &[Sample]) -> crate::error::Result<()> {
        if let Some(src) = &self.outside_source {
            self.outside = Some(std::sync::Arc::new(super::outside::OutsideScores::load(src, samples, self)?));
        }
        Ok(())
    }

    /// A meta field these settings name (`group-by = "meta:FIELD"`, `meta-features`)
    /// that no question carries is a typo, never a choice: grouping by it would make
    /// every question its own group while the report says "grouped by FIELD". `at`
    /// is where the settings were written (the pipeline file, or the command line).
    pub fn check_meta_fields(&self, samples: &[Sample], at: &crate::error::Location) -> crate::error::Result<()> {
        use crate::error::{Error, Problem, did_you_mean};
        let mut wanted: Vec<(&str, &str)> = Vec::new();
        if let Some(GroupBy::Meta(f)) = &self.group_by {
            wanted.push(("diagnose.group-by", f));
        }
        for f in self.features.meta_fields.iter().flatten() {
            wanted.push(("diagnose.meta-features", f));
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let have: std::collections::BTreeSet<&str> =
            samples.iter().flat_map(|s| s.meta.keys().map(String::as_str)).collect();
        let problems: Vec<Problem> = wanted
            .into_iter()
            .filter(|(_, f)| !have.contains(f))
            .map(|(key, f)| {
                let help = match did_you_mean(f, have.iter().copied()) {
                    Some(m) => format!("did you mean \"{m}\"?"),
                    None if have.is_empty() => {
                        "the questions carry no meta field: keep the field with [ingest.fields] meta".into()
                    }
                    None => format!(
                        "the questions' meta fields are: {} (a source field reaches meta through [ingest.fields] meta)",
                        have.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                };
                Problem::new(at.clone(), format!("no question has the meta field \"{f}\"")).field(key).help(help)
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
    }
}

impl DiagnoseConfig {
    /// Every diagnosed group (question type × answer format) must have at
    /// least as many fold groups under `group-by` as it has folds: a group's
    /// questions share a fold, so with fewer fold groups some fold holds out
    /// nothing, and with one the forest is trained on nothing while its
    /// chance-level accuracy reads as a confident "not above". Refused rather
    /// than run with fewer folds: the folds are the protocol's, and a setting
    /// that leaves a question type unmeasurable is the user's to change. A
    /// group of one question is left alone (no grouping changes its folds).
    /// `at` is where the settings were written.
    pub fn check_fold_groups(&self, samples: &[Sample], at: &crate::error::Location) -> crate::error::Result<()> {
        use crate::error::{Error, Problem};
        let Some(by) = &self.group_by else { return Ok(()) };
        let mut problems = Vec::new();
        for ((qtype, format), group) in super::run::group_samples(samples, self.min_group) {
            if group.len() < 2 {
                continue;
            }
            let k = self.folds.clamp(2, group.len());
            let n = by.keys(group.iter().copied()).into_iter().collect::<std::collections::BTreeSet<_>>().len();
            if n >= k {
                continue;
            }
            let which = match qtype.as_deref() {
                Some(super::run::POOLED) => "the pooled group of small question types".to_string(),
                Some(t) => format!("question type \"{t}\""),
                None => "the group without a question type".to_string(),
            };
            let plural = |one: &str, many: &str| if n == 1 { one.to_string() } else { many.to_string() };
            let counted = match by {
                GroupBy::Image => plural("distinct image", "distinct images"),
                GroupBy::ImageCluster(_) => {
                    plural("cluster of near-duplicate images", "clusters of near-duplicate images")
                }
                GroupBy::Video => plural("distinct video", "distinct videos"),
                GroupBy::Question => plural("distinct question", "distinct questions"),
                GroupBy::Meta(f) => format!("{} of {f}", plural("distinct value", "distinct values")),
            };
            let help = if n >= 2 {
                format!(
                    "a group's questions share one fold, so {k} folds need {k} groups: set folds to at most {n}, group \
                     by a field that separates these questions more finely, or leave group-by out"
                )
            } else {
                "a group's questions share one fold, so with one group the forest is trained on nothing: group by a \
                 field that separates these questions, or leave group-by out"
                    .to_string()
            };
            problems.push(
                Problem::new(
                    at.clone(),
                    format!(
                        "group-by = \"{}\": {which} ({}, {} questions) has {n} {counted}, {k} folds need at least {k}",
                        by.name(),
                        format.as_str(),
                        group.len()
                    ),
                )
                .field("diagnose.group-by")
                .help(help),
            );
        }
        if problems.is_empty() { Ok(()) } else { Err(Error::Invalid(problems)) }
    }
}

/// The blind diagnostic of a pipeline (`[diagnose] method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Method {
    /// Random forests on non-visual features.
    #[default]
    TstRf,
    /// A linear probe on sentence-embedding features ([`super::tst_embed`]).
    TstEmbed,
    /// Both; s(x) combined per question by [`Combine`].
    Both,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::TstRf => "tst-rf",
            Method::TstEmbed => "tst-embed",
            Method::Both => "both",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        match s {
            "tst-rf" => Ok(Method::TstRf),
            "tst-embed" => Ok(Method::TstEmbed),
            "both" => Ok(Method::Both),
            _ => Err(format!("method \"{s}\" is not \"tst-rf\", \"tst-embed\" or \"both\"")),
        }
    }

    /// Whether this method needs sentence embeddings.
    pub fn needs_embeddings(self) -> bool {
        self != Method::TstRf
    }
}

/// How `method = "both"` combines TsT-RF's and TsT-Embed's s(x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Combine {
    /// The larger of the two (a question is as biased as its most telling shortcut).
    #[default]
    Max,
    /// Their mean.
    Mean,
}

impl Combine {
    pub fn as_str(self) -> &'static str {
        match self {
            Combine::Max => "max",
            Combine::Mean => "mean",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Combine, String> {
        match s {
            "max" => Ok(Combine::Max),
            "mean" => Ok(Combine::Mean),
            _ => Err(format!("score \"{s}\" is not \"max\" or \"mean\"")),
        }
    }

    pub(super) fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Combine::Max => a.max(b),
            Combine::Mean => 0.5 * (a + b),
        }
    }
}

impl Default for DiagnoseConfig {
    fn default() -> Self {
        DiagnoseConfig {
            folds: 5,
            repeats: 1,
            seed: crate::context::DEFAULT_SEED,
            group_by: None,
            trees: 100,
            regression_trees: 200,
            numeric: NumericScoring::Exact,
            mra: MraRule::Strict,
            min_group: 20,
            features: FeatureConfig::default(),
            method: Method::TstRf,
            combine: Combine::Max,
            null: super::null::NullConfig::default(),
            folds_given: None,
            outside_source: None,
            outside: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::ImageRef;

    /// A question on an image whose `phash` and `dhash` are both `hash`.
    fn on_image(id: &str, sha: &str, hash: Option<&str>) -> Sample {
        let mut s = Sample::new(id, "q", "a");
        s.images.push(ImageRef {
            sha256: Some(sha.into()),
            phash: hash.map(str::to_string),
            dhash: hash.map(str::to_string),
            ..Default::default()
        });
        s
    }

    /// Two copies of one image (2 bits apart, other bytes) share a group; a
    /// third image 4 bits from both joins them; a fourth 6 bits from the
    /// third but 8 from the first does not (every two images of a cluster are
    /// near); a far one, an unhashed one and a solid one keep their own.
    #[test]
    fn image_clusters_join_images_every_two_of_which_are_near() {
        let samples = [
            on_image("1", "a", Some("5a5a5a5a5a5a5a5a")),
            on_image("2", "b", Some("5a5a5a5a5a5a5a59")),
            on_image("3", "c", Some("5a5a5a5a5a5a5a55")),
            on_image("4", "d", Some("a5a5a5a5a5a5a5a5")),
            on_image("5", "e", None),
            on_image("6", "a", Some("5a5a5a5a5a5a5a5a")),
            on_image("7", "f", Some("5a5a5a5a5a5a455d")),
            on_image("8", "g", Some("ffffffffffffffff")),
            on_image("9", "h", Some("ffffffffffffffff")),
        ];
        let keys = GroupBy::parse("image-cluster").unwrap().keys(&samples);
        assert_eq!(keys[0], keys[1]);
        assert_eq!(keys[1], keys[2]);
        assert_eq!(keys[0], keys[5]);
        assert_ne!(keys[0], keys[3]);
        assert_ne!(keys[2], keys[6]);
        assert_eq!((keys[4].as_str(), keys[6].as_str(), keys[7].as_str(), keys[8].as_str()), ("e", "f", "g", "h"));
        // At 2 bits the first and third (4 bits apart) never share a group; the
        // second, 2 bits from each, joins exactly one of them.
        let keys = GroupBy::parse("image-cluster:2").unwrap().keys(&samples);
        assert_ne!(keys[0], keys[2]);
        assert!((keys[1] == keys[0]) != (keys[1] == keys[2]), "{keys:?}");
        let refs: Vec<&Sample> = samples.iter().collect();
        let c = ImageClusterCount::of(&refs, DEFAULT);
        assert_eq!((c.images, c.hashed, c.joining, c.images_joined), (8, 7, 1, 3));
    }

    /// Seven images each 3 bits from the next (the ends 18 apart): no group
    /// holds two images more than the threshold apart.
    #[test]
    fn image_clusters_never_chain() {
        let base = 0x5a5a_5a5a_5a5a_5a5au64;
        let samples: Vec<Sample> = (0..7)
            .map(|i| {
                let h = base ^ ((1u64 << (3 * i)) - 1);
                on_image(&format!("{i}"), &format!("sha{i}"), Some(&format!("{h:016x}")))
            })
            .collect();
        let keys = GroupBy::parse("image-cluster").unwrap().keys(&samples);
        for a in 0..7 {
            for b in 0..7 {
                if keys[a] == keys[b] {
                    assert!(3 * a.abs_diff(b) <= DEFAULT as usize, "{a} and {b} share a group: {keys:?}");
                }
            }
        }
        // Pairs are merged closest first in the order of the distinct hashes.
        assert_eq!(keys, ["sha0", "sha0", "sha0", "sha3", "sha4", "sha4", "sha4"]);
    }

    /// With clusters that join images, the blind accuracy grouped by image is
    /// measured beside the run's and is exactly what a run grouped by image
    /// gives; with none joining it is not measured (the folds are the same).
    #[test]
    fn image_cluster_runs_state_the_blind_accuracy_grouped_by_image() {
        let words = ["left", "right", "upper", "lower", "middle", "outer"];
        let make = |join: bool| -> Vec<Sample> {
            (0..48)
                .map(|i| {
                    // Pairs of images 1 bit apart (joined) or 32 bits apart (not).
                    let base = 0x5a5a_5a5a_5a5a_5a5a ^ ((i / 2) as u64 * 0x0101_0101_0101_0101);
                    let h = if i % 2 == 1 { base ^ if join { 1 } else { 0xffff_ffff } } else { base };
                    let mut s = on_image(&format!("{i}"), &format!("sha{i}"), Some(&format!("{h:016x}")));
                    s.question = format!("Is the {} lobe clear?", words[i % 6]);
                    s.answer = if i % 3 == 0 { "no" } else { "yes" }.into();
                    s.answer_format = crate::sample::AnswerFormat::YesNo;
                    s
                })
                .collect()
        };
        let cfg = DiagnoseConfig { trees: 10, group_by: Some(GroupBy::ImageCluster(DEFAULT)), ..Default::default() };
        let joined = make(true);
        let d = crate::diagnose(&joined, &cfg);
        let c = d.image_clusters.clone().unwrap();
        assert_eq!((c.images, c.joining, c.images_joined), (48, 24, 48));
        let by_image = crate::diagnose(&joined, &DiagnoseConfig { group_by: Some(GroupBy::Image), ..cfg.clone() });
        assert_eq!(c.blind_grouped_by_image, Some(by_image.weighted));
        let apart = crate::diagnose(&make(false), &cfg).image_clusters.unwrap();
        assert_eq!((apart.joining, apart.blind_grouped_by_image), (0, None));
    }

    /// 40 yes/no questions of type "count"; `image(i)` says which image each shows.
    fn forty(image: impl Fn(usize) -> (String, String)) -> Vec<Sample> {
        (0..40)
            .map(|i| {
                let (sha, phash) = image(i);
                let mut s = on_image(&format!("{i}"), &sha, Some(&phash));
                s.question_type = Some("count".into());
                s.answer = if i % 2 == 0 { "yes" } else { "no" }.into();
                s.answer_format = crate::sample::AnswerFormat::YesNo;
                s.meta.insert("site".into(), "A".into());
                s
            })
            .collect()
    }

    fn fold_groups_error(samples: &[Sample], by: &str) -> String {
        let cfg = DiagnoseConfig { group_by: Some(GroupBy::parse(by).unwrap()), ..Default::default() };
        match cfg.check_fold_groups(samples, &crate::error::Location::file("p.toml")) {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    /// Solid-colour images (distinct files, one flat hash), one image shared by
    /// all, or one meta value: a question type with fewer fold groups than
    /// folds is refused, naming the setting, the group and the count.
    #[test]
    fn fewer_fold_groups_than_folds_is_a_located_error() {
        let solid = forty(|i| (format!("sha{i}"), "ffffffffffffffff".into()));
        assert_eq!(fold_groups_error(&solid, "image-cluster"), "ok");
        assert_eq!(fold_groups_error(&solid, "image"), "ok");
        let shared = forty(|_| ("one".into(), "5a5a5a5a5a5a5a5a".into()));
        assert_eq!(
            fold_groups_error(&shared, "image"),
            "error: p.toml: field \"diagnose.group-by\": group-by = \"image\": question type \"count\" (yes_no, 40 \
             questions) has 1 distinct image, 5 folds need at least 5\n  help: a group's questions share one fold, so \
             with one group the forest is trained on nothing: group by a field that separates these questions, or \
             leave group-by out"
        );
        // Near-duplicates of three images (1 bit apart): three clusters.
        let near =
            forty(|i| (format!("sha{i}"), format!("{:016x}", (0x5a5a_5a5a_5a5a_5a5au64 << (i % 3)) ^ (i as u64 & 1))));
        let e = fold_groups_error(&near, "image-cluster");
        assert!(
            e.contains(
                "group-by = \"image-cluster:6\": question type \"count\" (yes_no, 40 questions) has 3 clusters of \
                 near-duplicate images, 5 folds need at least 5"
            ) && e.contains("set folds to at most 3"),
            "{e}"
        );
        let e = fold_groups_error(&shared, "meta:site");
        assert!(e.contains("has 1 distinct value of site, 5 folds need at least 5"), "{e}");
        // Folds set to the number of groups pass.
        let cfg = DiagnoseConfig { folds: 3, group_by: Some(GroupBy::ImageCluster(DEFAULT)), ..Default::default() };
        cfg.check_fold_groups(&near, &crate::error::Location::file("p.toml")).unwrap();
    }

    #[test]
    fn image_cluster_thresholds_are_checked() {
        assert_eq!(GroupBy::parse("image-cluster:12"), Ok(GroupBy::ImageCluster(12)));
        assert_eq!(GroupBy::parse("image-cluster").unwrap().name(), "image-cluster:6");
        let e = GroupBy::parse("image-cluster:13").unwrap_err();
        assert_eq!(
            e,
            "group-by \"image-cluster:13\": the Hamming threshold \"13\" is not a whole number of bits from 0 to 12 \
             (default 6)"
        );
    }

    const DEFAULT: u32 = crate::sample::image_hash::DEFAULT_THRESHOLD;
}
