//! `croissant.json`: the release described in Croissant 1.1 (MLCommons), so
//! dataset search engines and loaders understand it without reading the card.
//!
//! One `cr:FileObject` per Parquet file (with its sha256), one `cr:RecordSet` per
//! config whose fields read the file's columns (images as `sc:ImageObject`;
//! the `circular` config's `rotation` as `sc:Integer`), the
//! Responsible-AI fields (`rai:*`) filled from the datasheet, and
//! `prov:wasDerivedFrom` naming the source benchmark.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::spec::Pipeline;

pub const FILE: &str = "croissant.json";

/// A config of the release as Croissant sees it: a name, a description and its
/// Parquet files (relative path → sha256).
pub struct Config<'a> {
    pub name: &'a str,
    pub description: String,
    pub schema: super::ConfigSchema,
    /// Whether the config's file has the video columns.
    pub videos: bool,
    pub files: Vec<(&'a str, &'a str)>,
}

/// The canonical columns with the video columns after `images`.
fn with_videos(
    columns: &[(&'static str, &'static str, bool, &'static str)],
) -> Vec<(&'static str, &'static str, bool, &'static str)> {
    let mut out = Vec::with_capacity(columns.len() + VIDEO_COLUMNS.len());
    for c in columns {
        out.push(*c);
        if c.0 == "images" {
            out.extend_from_slice(VIDEO_COLUMNS);
        }
    }
    out
}

/// Columns of the `duplicates` config.
const DUPLICATE_COLUMNS: &[(&str, &str, bool, &str)] = &[
    ("kind", "sc:Text", false, "exact, near, train-exact or train-near."),
    ("id_a", "sc:Text", false, "A question of this release."),
    ("id_b", "sc:Text", false, "Its duplicate: a question of this release, or of the training split (train-*)."),
    ("cosine", "sc:Float", false, "Cosine similarity of the question+options embeddings (empty for exact pairs)."),
    ("text_a", "sc:Text", false, "id_a's question."),
    ("text_b", "sc:Text", false, "id_b's question."),
];

/// The JSON-LD context of Croissant 1.1, as `mlcroissant` writes it, plus the
/// Responsible-AI and provenance vocabularies.
fn context() -> Value {
    json!({
        "@language": "en",
        "@vocab": "https://schema.org/",
        "arrayShape": "cr:arrayShape",
        "citeAs": "cr:citeAs",
        "column": "cr:column",
        "conformsTo": "dct:conformsTo",
        "containedIn": "cr:containedIn",
        "cr": "http://mlcommons.org/croissant/",
        "rai": "http://mlcommons.org/croissant/RAI/",
        "prov": "http://www.w3.org/ns/prov#",
        "data": {"@id": "cr:data", "@type": "@json"},
        "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
        "dct": "http://purl.org/dc/terms/",
        "equivalentProperty": "cr:equivalentProperty",
        "examples": {"@id": "cr:examples", "@type": "@json"},
        "extract": "cr:extract",
        "field": "cr:field",
        "fileProperty": "cr:fileProperty",
        "fileObject": "cr:fileObject",
        "fileSet": "cr:fileSet",
        "format": "cr:format",
        "includes": "cr:includes",
        "isArray": "cr:isArray",
        "isLiveDataset": "cr:isLiveDataset",
        "jsonPath": "cr:jsonPath",
        "key": "cr:key",
        "md5": "cr:md5",
        "parentField": "cr:parentField",
        "path": "cr:path",
        "recordSet": "cr:recordSet",
        "references": "cr:references",
        "regex": "cr:regex",
        "repeated": "cr:repeated",
        "replace": "cr:replace",
        "samplingRate": "cr:samplingRate",
        "sc": "https://schema.org/",
        "separator": "cr:separator",
        "source": "cr:source",
        "subField": "cr:subField",
        "transform": "cr:transform"
    })
}

/// Canonical columns: name, Croissant data type, whether a list, description.
const COLUMNS: &[(&str, &str, bool, &str)] = &[
    ("id", "sc:Text", false, "Unique, stable question id."),
    ("benchmark", "sc:Text", false, "Source benchmark."),
    ("split", "sc:Text", false, "Split of the source benchmark."),
    ("question_type", "sc:Text", false, "Question type, when the source has one."),
    ("question", "sc:Text", false, "The question."),
    ("context", "sc:Text", false, "Hint or context shown with the question."),
    ("options", "sc:Text", true, "Answer options (multiple choice); empty otherwise."),
    ("answer", "sc:Text", false, "The gold answer's text."),
    ("answer_index", "sc:Integer", false, "Position of the gold option (multiple choice)."),
    ("answer_format", "sc:Text", false, "multiple_choice, yes_no, numeric or open."),
    ("images", "sc:ImageObject", true, "The question's images (bytes and original path)."),
    ("parent_id", "sc:Text", false, "Variant rows: the question the variant was made from."),
    ("variant", "sc:Text", false, "Variant rows: the variant kind."),
    ("variant_params", "sc:Text", false, "Variant rows: the variant's parameters as JSON."),
    ("prompt", "sc:Text", false, "Variant rows: the full prompt to send."),
    ("expected", "sc:Text", false, "Variant rows: the expected behaviour (answer, abstain, or a gold)."),
];

/// The video columns, after `images` in a file whose questions have videos.
const VIDEO_COLUMNS: &[(&str, &str, bool, &str)] = &[
    (
        "videos",
        "sc:VideoObject",
        true,
        "The question's video files (bytes when embedded, and the path relative to the release's videos/ folder or          the source's video folder); null for a video given as frames.",
    ),
    ("video_frames", "sc:ImageObject", true, "The ordered frame images of each video given as frames."),
    (
        "video_facts",
        "sc:Text",
        true,
        "Per video: sha256, size in bytes, duration in seconds, frame rate, frame count, width, height and codec,          from the container's header.",
    ),
];

/// The columns the `circular` config has after the canonical ones.
const ROTATION_COLUMNS: &[(&str, &str, bool, &str)] = &[(
    crate::variants::ROTATION_COLUMN,
    "sc:Integer",
    false,
    "CircularEval rotation k of the row (variant circular@k): option i is option (i + k) mod n of the question.",
)];

/// SPDX licence id → its URL.
fn license_url(spdx: &str) -> String {
    format!("https://spdx.org/licenses/{spdx}.html")
}

/// Renders `croissant.json`.
pub fn render(p: &Pipeline, stages: &super::BuildOutputs<'_>, configs: &[Config<'_>]) -> Result<String> {
    let ds = &p.dataset;
    let answers = super::datasheet::answers(p, stages);
    let answer = |ids: &[&str]| -> Option<String> {
        let parts: Vec<&str> = ids.iter().filter_map(|id| answers.get(id).map(String::as_str)).collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    };
    let mut distribution = Vec::new();
    let mut record_sets = Vec::new();
    for c in configs {
        for (path, sha) in &c.files {
            distribution.push(json!({
                "@type": "cr:FileObject",
                "@id": path,
                "name": path,
                "description": format!("Config `{}`.", c.name),
                "contentUrl": path,
                "encodingFormat": "application/x-parquet",
                "sha256": sha,
            }));
        }
        let Some((file, _)) = c.files.first() else { continue };
        let columns: Vec<(&str, &str, bool, &str)> = match c.schema {
            super::ConfigSchema::Samples if c.videos => with_videos(COLUMNS),
            super::ConfigSchema::Samples => COLUMNS.to_vec(),
            super::ConfigSchema::Duplicates => DUPLICATE_COLUMNS.to_vec(),
            super::ConfigSchema::Rotations => {
                let base = if c.videos { with_videos(COLUMNS) } else { COLUMNS.to_vec() };
                base.into_iter().chain(ROTATION_COLUMNS.iter().copied()).collect()
            }
        };
        let key = match c.schema {
            super::ConfigSchema::Samples | super::ConfigSchema::Rotations => json!({"@id": format!("{}/id", c.name)}),
            super::ConfigSchema::Duplicates => {
                json!([{"@id": format!("{}/kind", c.name)}, {"@id": format!("{}/id_a", c.name)}, {"@id": format!("{}/id_b", c.name)}])
            }
        };
        let fields: Vec<Value> = columns
            .iter()
            .map(|(name, dtype, list, description)| {
                let mut f = json!({
                    "@type": "cr:Field",
                    "@id": format!("{}/{name}", c.name),
                    "name": name,
                    "description": description,
                    "dataType": dtype,
                    "source": {"fileObject": {"@id": file}, "extract": {"column": name}},
                });
                if *list {
                    f["isArray"] = json!(true);
                    f["arrayShape"] = json!("-1");
                }
                f
            })
            .collect();
        record_sets.push(json!({
            "@type": "cr:RecordSet",
            "@id": c.name,
            "name": c.name,
            "description": c.description,
            "key": key,
            "field": fields,
        }));
    }
    let mut doc = json!({
        "@context": context(),
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.1",
        "name": ds.name,
        "description": ds.description.as_deref().map_or_else(|| format!("{} (built by blindspot)", ds.name), |d| d.trim().to_string()),
        "license": license_url(&ds.license),
        "version": ds.version,
        "distribution": distribution,
        "recordSet": record_sets,
    });
    let set = |doc: &mut Value, key: &str, value: Option<String>| {
        if let Some(v) = value {
            doc[key] = json!(v);
        }
    };
    set(&mut doc, "url", ds.homepage.clone());
    set(&mut doc, "datePublished", ds.date_published.clone());
    set(&mut doc, "citeAs", ds.citation.as_ref().map(|c| c.trim().to_string()));
    if let Some(home) = &ds.homepage {
        doc["prov:wasDerivedFrom"] = json!({"@id": home});
    }
    let rai: BTreeMap<&str, Option<String>> = BTreeMap::from([
        ("rai:dataCollection", answer(&["collection"])),
        ("rai:dataCollectionRawData", answer(&["raw-data"])),
        ("rai:dataPreprocessingProtocol", answer(&["preprocessing"])),
        ("rai:dataBiases", answer(&["errors", "use-risks"])),
        ("rai:dataLimitations", answer(&["not-for", "missing", "sample"])),
        ("rai:dataUseCases", answer(&["purpose", "uses-so-far"])),
        ("rai:personalSensitiveInformation", answer(&["people", "confidential"])),
        ("rai:dataSocialImpact", answer(&["offensive"])),
        ("rai:dataReleaseMaintenancePlan", answer(&["updates", "maintainer", "errata"])),
    ]);
    for (key, value) in rai {
        set(&mut doc, key, value);
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| Error::Bug(e.to_string()))?;
    text.push('\n');
    Ok(text)
}
