//! Pieces of the card's YAML front matter, as the Hub reads it: the size
//! category, quoted scalars, and each config's `dataset_info` entry (its
//! rows' `features`, its split's size) as serde types written by the YAML
//! library.
//!
//! The scalars that come from the pipeline or the data (the name, the
//! licence, config names, data-file paths) are written by the escaping writer
//! ([`y`]), always double-quoted: the YAML library picks plain or single-quoted
//! style by itself and cannot be asked for double quotes, so writing them
//! through it would change every card's bytes.

use serde::{Deserialize, Serialize};

use crate::io::escape::yaml;

pub(super) fn size_category(n: usize) -> &'static str {
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
