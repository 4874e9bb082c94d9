//! The export manifest, `manifest.json` beside what `blindspot export`
//! wrote: which harness row is which blindspot question. The exporters write
//! it and the importers of the harnesses' result files read it back, both
//! through [`ExportManifest`], so the file has one shape in one place.

use serde::{Deserialize, Serialize};

/// `manifest.json` of one export, tagged by its harness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "harness", deny_unknown_fields)]
pub enum ExportManifest {
    /// One TSV per config, for VLMEvalKit's data root.
    #[serde(rename = "vlmevalkit")]
    Vlmevalkit {
        /// The name in every file name.
        name: String,
        files: Vec<TsvFile>,
    },
    /// One task per config and a group naming the tasks run by default.
    #[serde(rename = "lmms-eval")]
    LmmsEval {
        /// The name in every task name.
        name: String,
        /// The group task (`--tasks GROUP`).
        group: String,
        tasks: Vec<Task>,
    },
}

/// One VLMEvalKit TSV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TsvFile {
    /// `<Name>_<config>.tsv`.
    pub file: String,
    pub config: String,
    /// Which column holds the images.
    pub image_column: ImageColumn,
    /// Row `index` → blindspot id.
    pub rows: Vec<TsvRow>,
}

/// Where a VLMEvalKit TSV keeps its images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImageColumn {
    /// A text-only config.
    #[serde(rename = "none")]
    None,
    /// Base64 image bytes in `image`.
    #[serde(rename = "image")]
    Base64,
    /// Paths in `image_path`.
    #[serde(rename = "image_path")]
    Paths,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TsvRow {
    pub index: usize,
    pub id: String,
}

/// One lmms-eval task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub task: String,
    pub config: String,
    /// The task's YAML file.
    pub yaml: String,
    /// The task's Parquet file, relative to the export folder.
    pub data: String,
    /// Document `doc_id` → blindspot id.
    pub rows: Vec<DocRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocRow {
    pub doc_id: usize,
    pub id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file keeps the shape the harness round trip and older exports
    /// read: the tag first, then the fields in the order written.
    #[test]
    fn the_manifest_is_written_tag_first_in_field_order() {
        let m = ExportManifest::Vlmevalkit {
            name: "Demo".into(),
            files: vec![TsvFile {
                file: "Demo_original.tsv".into(),
                config: "original".into(),
                image_column: ImageColumn::Base64,
                rows: vec![TsvRow { index: 0, id: "q1".into() }],
            }],
        };
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(
            text,
            r#"{"harness":"vlmevalkit","name":"Demo","files":[{"file":"Demo_original.tsv","config":"original","image_column":"image","rows":[{"index":0,"id":"q1"}]}]}"#
        );
        assert_eq!(serde_json::from_str::<ExportManifest>(&text).unwrap(), m);
    }

    /// A row position named twice would leave another without its id and
    /// map two harness rows to one question: refused, naming the position.
    #[test]
    fn a_manifest_naming_a_row_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        let task = |rows: &str| {
            format!(
                r#"{{"harness":"lmms-eval","name":"d","group":"g","tasks":[{{"task":"t","config":"c","yaml":"t.yaml","data":"data/c.parquet","rows":[{rows}]}}]}}"#
            )
        };
        std::fs::write(&path, task(r#"{"doc_id":1,"id":"b"},{"doc_id":0,"id":"a"}"#)).unwrap();
        assert_eq!(crate::Manifest::load(&path).unwrap().lmms_eval["t"], ["a", "b"]);
        std::fs::write(&path, task(r#"{"doc_id":0,"id":"a"},{"doc_id":0,"id":"b"}"#)).unwrap();
        let e = crate::Manifest::load(&path).unwrap_err().to_string();
        assert!(e.contains("doc_id 0 is listed twice"), "{e}");
        std::fs::write(&path, task(r#"{"doc_id":2,"id":"a"}"#)).unwrap();
        let e = crate::Manifest::load(&path).unwrap_err().to_string();
        assert!(e.contains("doc_id 2 is out of range"), "{e}");
        std::fs::write(&path, r#"{"harness":"other","files":[]}"#).unwrap();
        let e = crate::Manifest::load(&path).unwrap_err().to_string();
        assert!(e.contains("not an export manifest") && e.contains("other"), "{e}");
    }
}
