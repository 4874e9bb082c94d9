//! Pieces of the card's YAML front matter, as the Hub reads it: the size
//! category, quoted scalars, and the `features` of each config's rows.

use std::fmt::Write;

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

pub(super) fn duplicates_features_yaml(out: &mut String) {
    out.push_str("  features:\n");
    for (name, dtype) in [
        ("kind", "string"),
        ("id_a", "string"),
        ("id_b", "string"),
        ("cosine", "float64"),
        ("text_a", "string"),
        ("text_b", "string"),
    ] {
        let _ = writeln!(out, "  - name: {name}\n    dtype: {dtype}");
    }
}

/// The features of a canonical config; `videos`: its file has the video columns.
pub(super) fn features_yaml(out: &mut String, videos: bool) {
    let strings = [
        "id",
        "benchmark",
        "split",
        "question_type",
        "question",
        "context",
        "answer",
        "answer_format",
        "parent_id",
        "variant",
        "variant_params",
        "prompt",
        "expected",
    ];
    out.push_str("  features:\n");
    for name in ["id", "benchmark", "split", "question_type", "question", "context"] {
        let _ = writeln!(out, "  - name: {name}\n    dtype: string");
    }
    out.push_str("  - name: options\n    list: string\n");
    out.push_str("  - name: answer\n    dtype: string\n");
    out.push_str("  - name: answer_index\n    dtype: int32\n");
    out.push_str("  - name: answer_format\n    dtype: string\n");
    out.push_str("  - name: images\n    list: image\n");
    out.push_str("  - name: image_facts\n    list:\n    - name: sha256\n      dtype: string\n    - name: width\n      dtype: int32\n    - name: height\n      dtype: int32\n    - name: phash\n      dtype: string\n    - name: dhash\n      dtype: string\n");
    if videos {
        // Plain `{bytes, path}` structs, as in the data files' own features: `datasets`'
        // `Video` feature needs a video decoder installed just to load the dataset.
        out.push_str(
            "  - name: videos\n    list:\n    - name: bytes\n      dtype: binary\n    - name: path\n      dtype: string\n",
        );
        out.push_str("  - name: video_frames\n    list:\n      list: image\n");
        out.push_str("  - name: video_facts\n    list:\n");
        for (name, dtype) in [
            ("sha256", "string"),
            ("size", "int64"),
            ("duration", "float64"),
            ("fps", "float64"),
            ("frame_count", "int64"),
            ("width", "int32"),
            ("height", "int32"),
            ("codec", "string"),
        ] {
            let _ = writeln!(out, "    - name: {name}\n      dtype: {dtype}");
        }
        out.push_str("    - name: frame_sha256\n      list: string\n");
    }
    out.push_str(
        "  - name: meta\n    list:\n    - name: key\n      dtype: string\n    - name: value\n      dtype: string\n",
    );
    for name in strings.iter().skip(8) {
        let _ = writeln!(out, "  - name: {name}\n    dtype: string");
    }
}
