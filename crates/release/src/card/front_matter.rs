//! The card's YAML front matter, as the Hub reads it: one serde type
//! ([`FrontMatter`]) that the card is written from and that `verify` and
//! `diff` read back, with the size category and each config's `dataset_info`
//! entry (its rows' `features`, its split's size).
//!
//! The scalars that come from the pipeline or the data (the name, the
//! licence, config names, data-file paths) are written by the escaping writer
//! ([`y`]), always double-quoted: the YAML library picks plain or single-quoted
//! style by itself and cannot be asked for double quotes, so writing them
//! through it would change every card's bytes.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::io::escape::yaml;

pub(crate) fn size_category(n: usize) -> &'static str {
    match n {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        _ => "1M<n<10M",
    }
}

/// A YAML scalar of the front matter.
pub(super) fn y(s: &str) -> String {
    yaml::quoted(s)
}

/// A config's `dataset_info` entry but its name: its rows' features and its
/// one split's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    pub features: Vec<Feature>,
    pub splits: Vec<Split>,
    pub download_size: u64,
    pub dataset_size: u64,
}

/// One column of a config's rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feature {
    pub name: String,
    #[serde(flatten)]
    pub kind: Kind,
}

/// A column's type: a value (`dtype: string`) or a list (`list: ...`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Dtype(String),
    List(List),
}

/// What a list holds: values of one type (`list: string`), structs
/// (`list: [{name, dtype}, ...]`) or lists (`list: {list: image}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum List {
    Of(String),
    Structs(Vec<Feature>),
    Lists(ListOf),
}

/// A list of lists: `{list: ...}` (a struct, not [`Kind`]: the YAML library
/// writes an enum's variant as a `!tag` unless it is flattened into a map).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListOf {
    pub list: Box<List>,
}

/// A split's name and size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub name: String,
    pub num_bytes: u64,
    pub num_examples: usize,
}

fn value(name: &str, dtype: &str) -> Feature {
    Feature { name: name.into(), kind: Kind::Dtype(dtype.into()) }
}

fn list(name: &str, of: List) -> Feature {
    Feature { name: name.into(), kind: Kind::List(of) }
}

fn structs(fields: &[(&str, &str)]) -> List {
    List::Structs(fields.iter().map(|(n, t)| value(n, t)).collect())
}

/// The features of a duplicates config.
pub(super) fn duplicates_features() -> Vec<Feature> {
    [
        ("kind", "string"),
        ("id_a", "string"),
        ("id_b", "string"),
        ("cosine", "float64"),
        ("text_a", "string"),
        ("text_b", "string"),
    ]
    .iter()
    .map(|(n, t)| value(n, t))
    .collect()
}

/// The features of a canonical config; `videos`: its file has the video columns.
pub(super) fn features(videos: bool) -> Vec<Feature> {
    let mut out: Vec<Feature> = ["id", "benchmark", "split", "question_type", "question", "context"]
        .iter()
        .map(|n| value(n, "string"))
        .collect();
    out.push(list("options", List::Of("string".into())));
    out.push(value("answer", "string"));
    out.push(value("answer_index", "int32"));
    out.push(value("answer_format", "string"));
    out.push(list("images", List::Of("image".into())));
    out.push(list(
        "image_facts",
        structs(&[
            ("sha256", "string"),
            ("width", "int32"),
            ("height", "int32"),
            ("phash", "string"),
            ("dhash", "string"),
        ]),
    ));
    if videos {
        // Plain `{bytes, path}` structs, as in the data files' own features: `datasets`'
        // `Video` feature needs a video decoder installed just to load the dataset.
        out.push(list("videos", structs(&[("bytes", "binary"), ("path", "string")])));
        out.push(list("video_frames", List::Lists(ListOf { list: Box::new(List::Of("image".into())) })));
        let mut facts = structs(&[
            ("sha256", "string"),
            ("size", "int64"),
            ("duration", "float64"),
            ("fps", "float64"),
            ("frame_count", "int64"),
            ("width", "int32"),
            ("height", "int32"),
            ("codec", "string"),
        ]);
        if let List::Structs(f) = &mut facts {
            f.push(list("frame_sha256", List::Of("string".into())));
        }
        out.push(list("video_facts", facts));
    }
    out.push(list("meta", structs(&[("key", "string"), ("value", "string")])));
    for name in ["parent_id", "variant", "variant_params", "prompt", "expected"] {
        out.push(value(name, "string"));
    }
    out
}

/// `info` as the lines under a `- config_name:` item (indented two spaces).
pub(super) fn config_info_yaml(info: &ConfigInfo) -> String {
    // Strings and integers only: YAML can write every value of these types.
    let text = serde_yaml_ng::to_string(info).expect("a ConfigInfo is always YAML");
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// The card's YAML front matter: what [`write`] writes, and what `verify` and
/// `diff` read back from a card, this one or another tool's. Reading is
/// lenient about what neither of them checks (a `license` list, a
/// `dataset_info` map, a feature type blindspot does not write read as
/// absent); `configs`, which says where the data is, is read strictly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FrontMatter {
    #[serde(default, deserialize_with = "lenient")]
    pub pretty_name: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub license: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub task_categories: Vec<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub size_categories: Vec<String>,
    #[serde(default)]
    pub configs: Option<Vec<ConfigEntry>>,
    #[serde(default, deserialize_with = "lenient")]
    pub dataset_info: Vec<DatasetInfo>,
}

/// A value read as `T`, or `T`'s default when it is some other shape.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    let value = serde_yaml_ng::Value::deserialize(d)?;
    Ok(serde_yaml_ng::from_value(value).unwrap_or_default())
}

/// A config of `configs:`: its name and where its files are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConfigEntry {
    pub config_name: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    #[serde(default)]
    pub data_files: Option<DataFiles>,
}

/// `data_files`: one pattern (split `train`), or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum DataFiles {
    One(String),
    Many(Vec<DataFileEntry>),
}

/// An entry of a `data_files` list: a split and its patterns, or a pattern
/// (split `train`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum DataFileEntry {
    Split { split: String, path: Patterns },
    Path(String),
}

/// One pattern or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Patterns {
    One(String),
    Many(Vec<String>),
}

impl Patterns {
    pub fn list(&self) -> Vec<String> {
        match self {
            Patterns::One(p) => vec![p.clone()],
            Patterns::Many(p) => p.clone(),
        }
    }
}

impl ConfigEntry {
    /// The first pattern of its first `data_files` entry, as written.
    pub fn first_pattern(&self) -> Option<&str> {
        match self.data_files.as_ref()? {
            DataFiles::One(p) => Some(p),
            DataFiles::Many(list) => match list.first()? {
                DataFileEntry::Path(p) => Some(p),
                DataFileEntry::Split { path: Patterns::One(p), .. } => Some(p),
                DataFileEntry::Split { path: Patterns::Many(p), .. } => p.first().map(String::as_str),
            },
        }
    }
}

/// A config's `dataset_info` entry: its name, features and size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DatasetInfo {
    pub config_name: String,
    #[serde(flatten)]
    pub info: ConfigInfo,
}

/// `front` as the lines between the card's two `---`.
///
/// The YAML library writes `info` (names, types and sizes blindspot chooses).
/// The strings that come from the pipeline or the data (the name, the
/// licence, config names, data-file paths) and the size category go through
/// one quoting function ([`y`]) instead: always double-quoted, as every card
/// has had them, where the library would pick plain or single-quoted style by
/// itself and cannot be asked for double quotes. The task category and the
/// split name, identifiers, are written plain ([`plain_or_quoted`]).
pub(crate) fn write(front: &FrontMatter) -> String {
    let mut out = String::new();
    let scalar = |out: &mut String, key: &str, v: &Option<String>| {
        if let Some(v) = v {
            let _ = writeln!(out, "{key}: {}", y(v));
        }
    };
    scalar(&mut out, "pretty_name", &front.pretty_name);
    scalar(&mut out, "license", &front.license);
    out.push_str("task_categories:\n");
    for t in &front.task_categories {
        let _ = writeln!(out, "- {}", plain_or_quoted(t));
    }
    out.push_str("size_categories:\n");
    for s in &front.size_categories {
        let _ = writeln!(out, "- {}", y(s));
    }
    out.push_str("configs:\n");
    for c in front.configs.iter().flatten() {
        let _ = writeln!(out, "- config_name: {}", y(&c.config_name));
        if c.default {
            out.push_str("  default: true\n");
        }
        match &c.data_files {
            None => {}
            Some(DataFiles::One(p)) => {
                let _ = writeln!(out, "  data_files: {}", y(p));
            }
            Some(DataFiles::Many(list)) => {
                out.push_str("  data_files:\n");
                for e in list {
                    match e {
                        DataFileEntry::Path(p) => {
                            let _ = writeln!(out, "  - {}", y(p));
                        }
                        DataFileEntry::Split { split, path } => {
                            let _ = writeln!(out, "  - split: {}", plain_or_quoted(split));
                            match path {
                                Patterns::One(p) => {
                                    let _ = writeln!(out, "    path: {}", y(p));
                                }
                                Patterns::Many(ps) => {
                                    out.push_str("    path:\n");
                                    for p in ps {
                                        let _ = writeln!(out, "    - {}", y(p));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out.push_str("dataset_info:\n");
    for d in &front.dataset_info {
        let _ = writeln!(out, "- config_name: {}", y(&d.config_name));
        out.push_str(&config_info_yaml(&d.info));
    }
    out
}

/// A name that YAML reads back as that string when written plain (a letter,
/// then letters, digits, `-` and `_`, and no word YAML 1.1 reads as a boolean
/// or null) as it is; anything else double-quoted.
fn plain_or_quoted(s: &str) -> String {
    const WORDS: [&str; 9] = ["true", "false", "yes", "no", "on", "off", "null", "y", "n"];
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain { s.to_string() } else { y(s) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_info_is_written_as_the_hub_reads_it_and_reads_back() {
        let info = ConfigInfo {
            features: duplicates_features(),
            splits: vec![Split { name: "test".into(), num_bytes: 1234, num_examples: 7 }],
            download_size: 1234,
            dataset_size: 1234,
        };
        let text = config_info_yaml(&info);
        assert_eq!(
            text,
            "  features:\n  - name: kind\n    dtype: string\n  - name: id_a\n    dtype: string\n  - name: id_b\n    \
             dtype: string\n  - name: cosine\n    dtype: float64\n  - name: text_a\n    dtype: string\n  - name: text_b\n    \
             dtype: string\n  splits:\n  - name: test\n    num_bytes: 1234\n    num_examples: 7\n  download_size: 1234\n  \
             dataset_size: 1234\n"
        );
        let video = ConfigInfo { features: features(true), ..info };
        let text = config_info_yaml(&video);
        assert!(text.contains("  - name: video_frames\n    list:\n      list: image\n"), "{text}");
        assert!(
            text.contains("    - name: codec\n      dtype: string\n    - name: frame_sha256\n      list: string\n")
        );
        let unindented: String = text.lines().map(|l| format!("{}\n", &l[2..])).collect();
        assert_eq!(serde_yaml_ng::from_str::<ConfigInfo>(&unindented).unwrap(), video);
    }

    /// The whole front matter reads back as the type it was written from,
    /// hostile names included, and keeps the bytes cards have always had.
    #[test]
    fn the_front_matter_reads_back_as_written() {
        let info = ConfigInfo {
            features: duplicates_features(),
            splits: vec![Split { name: "test".into(), num_bytes: 9, num_examples: 2 }],
            download_size: 9,
            dataset_size: 9,
        };
        let config = |name: &str, path: &str, split: &str| ConfigEntry {
            config_name: name.into(),
            default: name == "default",
            data_files: Some(DataFiles::Many(vec![DataFileEntry::Split {
                split: split.into(),
                path: Patterns::One(path.into()),
            }])),
        };
        let front = FrontMatter {
            pretty_name: Some("evil\ninclude: x\n# \"quoted\" 'single'".into()),
            license: Some("cc0-1.0".into()),
            task_categories: vec!["visual-question-answering".into()],
            size_categories: vec![size_category(999).into()],
            configs: Some(vec![
                config("default", "data/test-*.parquet", "test"),
                config("a: b", "x/te st-*.parquet", "yes"),
            ]),
            dataset_info: vec![DatasetInfo { config_name: "default".into(), info }],
        };
        let text = write(&front);
        assert!(
            text.starts_with(
                "pretty_name: \"evil\\ninclude: x\\n# \\\"quoted\\\" 'single'\"\nlicense: \"cc0-1.0\"\n\
                 task_categories:\n- visual-question-answering\nsize_categories:\n- \"n<1K\"\nconfigs:\n\
                 - config_name: \"default\"\n  default: true\n  data_files:\n  - split: test\n    \
                 path: \"data/test-*.parquet\"\n- config_name: \"a: b\"\n  data_files:\n  - split: \"yes\"\n    \
                 path: \"x/te st-*.parquet\"\ndataset_info:\n- config_name: \"default\"\n  features:\n"
            ),
            "{text}"
        );
        assert_eq!(serde_yaml_ng::from_str::<FrontMatter>(&text).unwrap(), front);
    }

    /// What neither `verify` nor `diff` checks may have another tool's shape.
    #[test]
    fn another_tools_front_matter_reads_with_its_configs() {
        let yaml = "license: [mit, apache-2.0]\ndataset_info:\n  features:\n  - name: label\n    dtype:\n      \
                    class_label: {names: {'0': a}}\nconfigs:\n- config_name: default\n  data_files: data/*.parquet\n";
        let front: FrontMatter = serde_yaml_ng::from_str(yaml).unwrap();
        assert_eq!((front.license, front.dataset_info.len()), (None, 0));
        assert_eq!(front.configs.unwrap()[0].first_pattern(), Some("data/*.parquet"));
    }

    /// The video config's features, line for line as the card has always had them.
    #[test]
    fn the_video_features_keep_their_bytes() {
        let expected = concat!(
            "  features:\n",
            "  - name: id\n",
            "    dtype: string\n",
            "  - name: benchmark\n",
            "    dtype: string\n",
            "  - name: split\n",
            "    dtype: string\n",
            "  - name: question_type\n",
            "    dtype: string\n",
            "  - name: question\n",
            "    dtype: string\n",
            "  - name: context\n",
            "    dtype: string\n",
            "  - name: options\n",
            "    list: string\n",
            "  - name: answer\n",
            "    dtype: string\n",
            "  - name: answer_index\n",
            "    dtype: int32\n",
            "  - name: answer_format\n",
            "    dtype: string\n",
            "  - name: images\n",
            "    list: image\n",
            "  - name: image_facts\n",
            "    list:\n",
            "    - name: sha256\n",
            "      dtype: string\n",
            "    - name: width\n",
            "      dtype: int32\n",
            "    - name: height\n",
            "      dtype: int32\n",
            "    - name: phash\n",
            "      dtype: string\n",
            "    - name: dhash\n",
            "      dtype: string\n",
            "  - name: videos\n",
            "    list:\n",
            "    - name: bytes\n",
            "      dtype: binary\n",
            "    - name: path\n",
            "      dtype: string\n",
            "  - name: video_frames\n",
            "    list:\n",
            "      list: image\n",
            "  - name: video_facts\n",
            "    list:\n",
            "    - name: sha256\n",
            "      dtype: string\n",
            "    - name: size\n",
            "      dtype: int64\n",
            "    - name: duration\n",
            "      dtype: float64\n",
            "    - name: fps\n",
            "      dtype: float64\n",
            "    - name: frame_count\n",
            "      dtype: int64\n",
            "    - name: width\n",
            "      dtype: int32\n",
            "    - name: height\n",
            "      dtype: int32\n",
            "    - name: codec\n",
            "      dtype: string\n",
            "    - name: frame_sha256\n",
            "      list: string\n",
            "  - name: meta\n",
            "    list:\n",
            "    - name: key\n",
            "      dtype: string\n",
            "    - name: value\n",
            "      dtype: string\n",
            "  - name: parent_id\n",
            "    dtype: string\n",
            "  - name: variant\n",
            "    dtype: string\n",
            "  - name: variant_params\n",
            "    dtype: string\n",
            "  - name: prompt\n",
            "    dtype: string\n",
            "  - name: expected\n",
            "    dtype: string\n",
        );
        let info = ConfigInfo { features: features(true), splits: Vec::new(), download_size: 0, dataset_size: 0 };
        let text = config_info_yaml(&info);
        assert_eq!(
            text.strip_suffix("  splits: []\n  download_size: 0\n  dataset_size: 0\n"),
            Some(expected),
            "{text}"
        );
    }
}
