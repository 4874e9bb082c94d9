//! What ingest reads and how: the inputs with their formats, the field
//! mapping, filters and the policies for invalid rows. The pipeline file's
//! `[ingest]` section is validated into an [`IngestPlan`] (by `spec`); a data
//! file with canonical field names needs none ([`IngestPlan::for_canonical_input`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::context::DEFAULT_SEED;
use crate::error::{Error, Location, OnInvalid, Problem, Result};
use crate::sample::AnswerFormat;

/// File format of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A JSON array of records, an object of records keyed by id, or JSON lines.
    Json,
    /// One JSON record per line.
    Jsonl,
    /// Comma-separated with a header row.
    Csv,
    /// Tab-separated with a header row.
    Tsv,
    /// A Parquet file, or an Arrow IPC file (`.arrow`, `.feather`).
    Parquet,
    /// A Hugging Face dataset folder (`data/<split>-*.parquet`).
    Hf,
    /// A VLMEvalKit TSV (`index, question, A..J, answer, category, image`).
    Vlmevalkit,
    /// A Hugging Face ImageFolder: images plus `metadata.jsonl` / `metadata.csv` with `file_name`.
    Imagefolder,
    /// A spreadsheet (`.xlsx`, `.xlsm`, `.xls`, `.ods`): the first sheet, a header row.
    Xlsx,
}

/// How the gold is read from an answer field that holds a list of reference answers
/// (VQA's ten annotators, several accepted answers): `[ingest] reference-answers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceAnswers {
    /// The most common answer (ties: the one given first), VQA's convention.
    Majority,
    /// The first answer given.
    First,
}

impl ReferenceAnswers {
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceAnswers::Majority => "majority",
            ReferenceAnswers::First => "first",
        }
    }
}

/// How the source writes the gold answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerKind {
    /// Text of an option, else a letter `A`..`J`, else a 0-based index.
    #[default]
    Auto,
    /// A letter `A`..`J` naming an option.
    Letter,
    /// A 0-based option index.
    Index,
    /// A 1-based option index.
    Index1,
    /// The answer text itself.
    Text,
}

impl Format {
    /// Infers the format of a path from its extension or, for folders, contents.
    pub fn infer(path: &Path) -> Option<Format> {
        if path.is_dir() {
            // `exists`, not `is_file`: a metadata file that is not a regular file
            // is an ImageFolder with a broken metadata file, not a Parquet folder.
            if path.join("metadata.jsonl").exists() || path.join("metadata.csv").exists() {
                return Some(Format::Imagefolder);
            }
            return Some(Format::Hf);
        }
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let ext = name.rsplit('.').next()?;
        Some(match ext {
            "json" => Format::Json,
            "jsonl" | "ndjson" => Format::Jsonl,
            "csv" => Format::Csv,
            "tsv" if looks_like_vlmevalkit(path) => Format::Vlmevalkit,
            "tsv" => Format::Tsv,
            "txt" if tab_separated(path) => Format::Tsv,
            // Arrow IPC files (a `save_to_disk` shard, Feather v2) are read as Parquet's rows are.
            "parquet" | "arrow" | "feather" => Format::Parquet,
            e if crate::xlsx::EXTENSIONS.contains(&e) => Format::Xlsx,
            _ => return None,
        })
    }
}

/// A `.txt` file that is a table of tab-separated values (MME writes its questions so):
/// every line of its first 64 KiB (the last one only when complete) holds the same
/// number of tabs, at least one.
fn tab_separated(path: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut head = Vec::new();
    if f.take(64 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    // Excel's "Unicode Text" is tab-separated UTF-16: read as a TSV, it is refused
    // as UTF-16 with what to do, not as a file of unknown format.
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return true;
    }
    let whole = head.len() < 64 * 1024 || head.ends_with(b"\n");
    let text = String::from_utf8_lossy(&head);
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if !whole {
        lines.pop();
    }
    let tabs = |l: &str| l.matches('\t').count();
    lines.first().is_some_and(|first| tabs(first) > 0 && lines.iter().all(|l| tabs(l) == tabs(first)))
}

/// A TSV whose header has VLMEvalKit's `index`, `question`, `A` and `answer` columns.
fn looks_like_vlmevalkit(path: &Path) -> bool {
    use std::io::{BufRead, BufReader, Read};
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut header = String::new();
    if BufReader::new(f.take(64 * 1024)).read_line(&mut header).is_err() {
        return false;
    }
    let cols: Vec<&str> = header.trim_end().split('\t').map(str::trim).collect();
    ["index", "question", "A", "answer"].iter().all(|c| cols.contains(c))
}

/// One input file with its format.
#[derive(Debug, Clone)]
pub struct Input {
    pub path: PathBuf,
    pub format: Format,
}

/// A second file whose records complete the questions' (`[[ingest.join]]`): VQA's
/// annotations beside its questions, joined on the field `on` both hold.
#[derive(Debug, Clone)]
pub struct JoinPlan {
    pub input: Input,
    pub on: String,
    /// JSON: the member holding its records (as `[ingest] records` for the questions).
    pub records: Option<String>,
}

/// How to read a field: a path into the record, or a template of paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accessor {
    Path(String),
    Template(Vec<TemplatePart>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart {
    Lit(String),
    Field(String),
    /// `{field:012}`: a whole number written with leading zeros to this many digits
    /// (COCO's image files, `COCO_val2014_000000393225.jpg`).
    Padded(String, usize),
}

impl Accessor {
    /// `"{a}-{b}"` is a template; anything else a field path.
    pub fn parse(s: &str) -> std::result::Result<Accessor, String> {
        if !s.contains('{') && !s.contains('}') {
            return Ok(Accessor::Path(s.to_string()));
        }
        let mut parts = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(i) if rest.as_bytes()[i] == b'}' => return Err(format!("unmatched \"}}\" in template \"{s}\"")),
                Some(i) => {
                    if i > 0 {
                        parts.push(TemplatePart::Lit(rest[..i].to_string()));
                    }
                    let close = rest[i..].find('}').ok_or_else(|| format!("unclosed \"{{\" in template \"{s}\""))?;
                    let name = &rest[i + 1..i + close];
                    if name.is_empty() || name.contains('{') {
                        return Err(format!("empty or nested placeholder in template \"{s}\""));
                    }
                    // `name:0W`: zero-padded to W digits.
                    let padded = name.rsplit_once(':').and_then(|(field, spec)| {
                        let width = spec.strip_prefix('0')?.parse::<usize>().ok()?;
                        (!field.is_empty() && spec.bytes().all(|b| b.is_ascii_digit()) && (1..=32).contains(&width))
                            .then(|| TemplatePart::Padded(field.to_string(), width))
                    });
                    parts.push(padded.unwrap_or_else(|| TemplatePart::Field(name.to_string())));
                    rest = &rest[i + close + 1..];
                }
                None => {
                    parts.push(TemplatePart::Lit(rest.to_string()));
                    rest = "";
                }
            }
        }
        Ok(Accessor::Template(parts))
    }

    /// The source fields this accessor reads.
    pub fn fields(&self) -> Vec<&str> {
        match self {
            Accessor::Path(p) => vec![p.as_str()],
            Accessor::Template(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    TemplatePart::Field(f) | TemplatePart::Padded(f, _) => Some(f.as_str()),
                    TemplatePart::Lit(_) => None,
                })
                .collect(),
        }
    }
}

/// Which unmapped source fields go to `meta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaKeep {
    All,
    Fields(Vec<String>),
}

/// Source field → canonical field. `None` means "the canonical name, when the
/// record has it".
#[derive(Debug, Clone)]
pub struct FieldMap {
    pub id: Option<Accessor>,
    pub question: Option<Accessor>,
    pub context: Option<Accessor>,
    pub options: Option<Vec<Accessor>>,
    /// Options drawn in the image: this many, known by their letters only.
    pub options_letters: Option<usize>,
    pub answer: Option<Accessor>,
    pub answer_kind: AnswerKind,
    pub question_type: Option<Accessor>,
    pub images: Option<Vec<Accessor>>,
    /// Video files; `None`: `videos` or `video` when a video folder is set.
    pub videos: Option<Vec<Accessor>>,
    /// The ordered frame images of the question's one video.
    pub video_frames: Option<Accessor>,
    pub meta: MetaKeep,
}

impl FieldMap {
    /// The source fields the mapping names for optional canonical fields, each with
    /// the `[ingest.fields]` key that names it (`options`, `question-type`, `meta`,
    /// ...), in key order. The required fields (id, question, answer) are checked
    /// record by record; these are not, so a misspelt one would silently read as
    /// absent.
    pub fn optional_sources(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut add = |key: &'static str, acc: &Accessor| {
            for f in acc.fields() {
                if !out.iter().any(|(k, x): &(&str, String)| *k == key && x == f) {
                    out.push((key, f.to_string()));
                }
            }
        };
        for (key, acc) in [("context", &self.context), ("question-type", &self.question_type)] {
            if let Some(a) = acc {
                add(key, a);
            }
        }
        if let Some(a) = &self.video_frames {
            add("video-frames", a);
        }
        for (key, list) in [("options", &self.options), ("images", &self.images), ("videos", &self.videos)] {
            for a in list.iter().flatten() {
                add(key, a);
            }
        }
        if let MetaKeep::Fields(list) = &self.meta {
            for f in list {
                add("meta", &Accessor::Path(f.clone()));
            }
        }
        out
    }

    /// For inputs whose fields already carry the canonical names.
    pub fn canonical() -> Self {
        FieldMap {
            id: None,
            question: None,
            context: None,
            options: None,
            options_letters: None,
            answer: None,
            answer_kind: AnswerKind::Auto,
            question_type: None,
            images: None,
            videos: None,
            video_frames: None,
            meta: MetaKeep::All,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Filter {
    pub field: String,
    pub any_of: Option<Vec<String>>,
    pub not_in: Option<Vec<String>>,
}

/// Everything ingest needs.
#[derive(Debug, Clone)]
pub struct IngestPlan {
    pub inputs: Vec<Input>,
    /// Files whose records complete each input record, matched on a shared field.
    pub joins: Vec<JoinPlan>,
    /// JSON inputs: the dot path of the member holding the records (`[ingest] records`).
    pub records: Option<String>,
    /// Spreadsheet inputs: the name of the sheet holding the questions (`[ingest] sheet`).
    pub sheet: Option<String>,
    /// CSV and TSV inputs without a header row: their columns' names, in order
    /// (`[ingest] header = false`, `columns`).
    pub columns: Option<Vec<String>>,
    /// The pipeline says the first row is a header (`[ingest] header = true`): it is
    /// not checked for reading as a record.
    pub header_said: bool,
    pub images_dir: Option<PathBuf>,
    /// The folder videos (files and frames) are read from (`[ingest] videos`).
    pub videos_dir: Option<PathBuf>,
    /// Images named by path are kept as names, unread (`[ingest] image-names-only`,
    /// and a data file ingested without a pipeline, which has no image folder).
    pub image_names_only: bool,
    /// The image folder is the input file's own folder, not one the user chose
    /// (a data file read without a pipeline or `--images`): a path is looked up
    /// there as written, never searched for by file name, and one not found is
    /// kept as its name with a counted warning.
    pub images_beside: bool,
    /// The most pixels an image may declare.
    pub max_image_pixels: u64,
    pub split: String,
    pub benchmark: String,
    pub on_invalid: OnInvalid,
    pub missing: Vec<String>,
    pub fields: FieldMap,
    pub answer_map: BTreeMap<String, String>,
    /// An answer field holding a list of reference answers: how the gold is read
    /// from it (`None`: such a field is an error).
    pub reference_answers: Option<ReferenceAnswers>,
    pub filters: Vec<Filter>,
    pub shuffle_options: bool,
    pub question_text: Option<String>,
    pub options_in_question: bool,
    pub answer_format: Option<AnswerFormat>,
    pub seed: u64,
}

/// The folder a blindspot release carries its video files in (`videos/`,
/// beside its `manifest.json`), for a release's folder or a data file below
/// it: the video paths its rows name are relative to that folder.
fn release_videos_dir(path: &Path) -> Option<PathBuf> {
    let start = if path.is_dir() { path } else { path.parent()? };
    let release = start.ancestors().find(|d| d.join("manifest.json").is_file())?;
    Some(release.join("videos")).filter(|d| d.is_dir())
}

impl IngestPlan {
    /// Ingest of a single file with canonical field names and no pipeline file.
    pub fn for_canonical_input(path: &Path) -> Result<IngestPlan> {
        let format = Format::infer(path).ok_or_else(|| {
            Error::one(Problem::new(Location::file(path), "cannot tell the file's format from its name").help(
                "use a .json, .jsonl, .csv, .tsv, .xlsx or .parquet file (or a .txt of tab-separated values), a Hugging Face folder, or a pipeline file",
            ))
        })?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("benchmark").to_string();
        // Image paths in a data file are relative to the file, as a Hugging Face
        // ImageFolder's and most benchmarks' are.
        // An ImageFolder is its own image folder (ingest uses it as one).
        let beside = if format == Format::Imagefolder {
            None
        } else if path.is_dir() {
            Some(path.to_path_buf())
        } else {
            match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => Some(p.to_path_buf()),
                _ => Some(PathBuf::from(".")),
            }
        };
        Ok(IngestPlan {
            inputs: vec![Input { path: path.to_path_buf(), format }],
            joins: Vec::new(),
            records: None,
            sheet: None,
            columns: None,
            header_said: false,
            images_beside: beside.is_some(),
            images_dir: beside,
            videos_dir: release_videos_dir(path),
            image_names_only: true,
            max_image_pixels: crate::images::MAX_PIXELS,
            split: "test".into(),
            benchmark: name,
            on_invalid: OnInvalid::Error,
            missing: vec!["NULL".into()],
            fields: FieldMap::canonical(),
            answer_map: BTreeMap::new(),
            reference_answers: None,
            filters: Vec::new(),
            shuffle_options: false,
            question_text: None,
            options_in_question: false,
            answer_format: None,
            seed: DEFAULT_SEED,
        })
    }
}
