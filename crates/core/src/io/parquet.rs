//! The canonical Parquet codec, below every stage: samples and Arrow
//! batches written with a fixed schema, zstd, row groups of about 100 MB, the
//! `huggingface` schema-metadata key (so `datasets` types image columns as
//! `Image`) and `created_by` pinned so bytes do not change with the parquet
//! crate's version; canonical files read back into samples; and the guards
//! every Parquet reader runs first (footer ranges, decoder panics).

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
    StructArray,
};
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};

use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Location, Problem, Result};
use crate::sample::{
    AnswerFormat, Embed, EmbedVideos, ImageRef, Sample, VideoRef, arrow_schema_with, has_videos, to_record_batch_with,
};

/// Target uncompressed size of one row group.
const ROW_GROUP_BYTES: usize = 100 * 1024 * 1024;
/// Rows converted to Arrow at a time (bounds memory when images are embedded).
const CHUNK_ROWS: usize = 1024;

/// The Hugging Face `datasets` features of the canonical schema, with the
/// video columns when `videos`. A video file is a plain `{bytes, path}` dict,
/// not `datasets`' `Video`: that feature needs a video decoder installed to
/// load the dataset at all; `cast_column("videos", List(Video()))` decodes it.
/// Frames are images.
pub fn hf_features_with(videos: bool) -> serde_json::Value {
    let mut features = hf_features();
    if videos && let Some(map) = features.as_object_mut() {
        let schema = arrow_schema_with(true);
        for name in ["videos", "video_facts"] {
            let field = schema.field_with_name(name).expect("video columns are in the schema");
            map.insert(name.to_string(), hf_feature(field.data_type()));
        }
        map.insert(
            "video_frames".to_string(),
            serde_json::json!({"feature": {"feature": {"_type": "Image"}, "_type": "List"}, "_type": "List"}),
        );
    }
    features
}

/// The Hugging Face `datasets` features of the canonical schema.
pub fn hf_features() -> serde_json::Value {
    let value = |dtype: &str| serde_json::json!({"dtype": dtype, "_type": "Value"});
    serde_json::json!({
        "id": value("string"),
        "benchmark": value("string"),
        "split": value("string"),
        "question_type": value("string"),
        "question": value("string"),
        "context": value("string"),
        "options": {"feature": value("string"), "_type": "List"},
        "answer": value("string"),
        "answer_index": value("int32"),
        "answer_format": value("string"),
        "images": {"feature": {"_type": "Image"}, "_type": "List"},
        "image_facts": {
            "feature": {
                "sha256": value("string"),
                "width": value("int32"),
                "height": value("int32"),
                "phash": value("string"),
                "dhash": value("string"),
            },
            "_type": "List"
        },
        "meta": {"feature": {"key": value("string"), "value": value("string")}, "_type": "List"},
        "parent_id": value("string"),
        "variant": value("string"),
        "variant_params": value("string"),
        "prompt": value("string"),
        "expected": value("string"),
    })
}

/// A sample's size in a data file, roughly (text, and image bytes when embedded
/// or on disk): what row groups are sized by.
pub fn estimated_row_bytes(s: &Sample) -> usize {
    let text = s.id.len()
        + s.question.len()
        + s.answer.len()
        + s.options.iter().map(String::len).sum::<usize>()
        + s.context.as_ref().map_or(0, String::len)
        + s.meta.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
        + s.prompt.as_ref().map_or(0, String::len);
    let images: usize = s
        .images
        .iter()
        .map(|i| {
            i.bytes.as_ref().map(Vec::len).unwrap_or_else(|| {
                i.source.as_ref().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len() as usize)
            })
        })
        .sum();
    let videos: usize = s
        .videos
        .iter()
        .map(|v| {
            v.bytes.as_ref().map(Vec::len).unwrap_or_else(|| {
                v.source.as_ref().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len() as usize)
            }) + v.frames.iter().map(|f| f.bytes.as_ref().map_or(0, Vec::len)).sum::<usize>()
        })
        .sum();
    64 + text + images + videos
}

/// Writer settings every blindspot Parquet file shares: zstd, `created_by`
/// pinned, plus any schema metadata.
pub fn properties(rows_per_group: usize, metadata: Vec<KeyValue>) -> Result<WriterProperties> {
    Ok(WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).map_err(|e| Error::Bug(e.to_string()))?))
        .set_created_by("blindspot".to_string())
        .set_max_row_group_row_count(Some(rows_per_group.max(1)))
        .set_key_value_metadata((!metadata.is_empty()).then_some(metadata))
        .build())
}

/// Writes `batches` of `schema` to a new Parquet file at `path`, durably;
/// returns the file's size.
fn write_parquet(
    path: &Path,
    schema: arrow::datatypes::SchemaRef,
    props: WriterProperties,
    batches: impl IntoIterator<Item = Result<arrow::array::RecordBatch>>,
) -> Result<u64> {
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    let mut writer = ArrowWriter::try_new_with_options(
        BufWriter::new(file),
        schema,
        ArrowWriterOptions::new().with_properties(props),
    )
    .map_err(|e| Error::Bug(format!("parquet writer: {e}")))?;
    for batch in batches {
        writer.write(&batch?).map_err(|e| write_err(path, e))?;
    }
    let inner = writer.into_inner().map_err(|e| write_err(path, e))?;
    let file = inner.into_inner().map_err(|e| Error::io(path, e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(path, e))?;
    Ok(file.metadata().map_err(|e| Error::io(path, e))?.len())
}

/// The `datasets` feature of a plain Arrow type: what `datasets` would infer
/// from it, written down so that every Parquet file carries the key.
fn hf_feature(dt: &DataType) -> serde_json::Value {
    let value = |dtype: &str| serde_json::json!({"dtype": dtype, "_type": "Value"});
    match dt {
        DataType::Boolean => value("bool"),
        DataType::Int8 => value("int8"),
        DataType::Int16 => value("int16"),
        DataType::Int32 => value("int32"),
        DataType::Int64 => value("int64"),
        DataType::UInt8 => value("uint8"),
        DataType::UInt16 => value("uint16"),
        DataType::UInt32 => value("uint32"),
        DataType::UInt64 => value("uint64"),
        DataType::Float16 => value("float16"),
        DataType::Float32 => value("float32"),
        DataType::Float64 => value("float64"),
        DataType::Utf8 | DataType::Utf8View => value("string"),
        DataType::LargeUtf8 => value("large_string"),
        DataType::Binary | DataType::BinaryView => value("binary"),
        DataType::LargeBinary => value("large_binary"),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            serde_json::json!({"feature": hf_feature(f.data_type()), "_type": "List"})
        }
        DataType::Struct(fields) => fields
            .iter()
            .map(|f| (f.name().clone(), hf_feature(f.data_type())))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => value(&other.to_string().to_ascii_lowercase()),
    }
}

/// `schema` with the `huggingface` key (`{"info": {"features": ...}}`) in
/// its metadata, and the same key for the Parquet footer. Both: pyarrow (and
/// so `datasets`) reads the Arrow schema's metadata, other readers the footer.
fn with_hf_metadata(schema: &Schema, features: serde_json::Value) -> (SchemaRef, Vec<KeyValue>) {
    let hf = serde_json::json!({"info": {"features": features}}).to_string();
    let mut metadata = schema.metadata().clone();
    metadata.insert("huggingface".to_string(), hf.clone());
    (Arc::new(schema.clone().with_metadata(metadata)), vec![KeyValue::new("huggingface".to_string(), hf)])
}

/// Writes one Arrow batch to `path` (scores, exported features).
pub fn write_batch(path: &Path, batch: &arrow::array::RecordBatch) -> Result<()> {
    let features: serde_json::Map<_, _> =
        batch.schema().fields().iter().map(|f| (f.name().clone(), hf_feature(f.data_type()))).collect();
    let (schema, kv) = with_hf_metadata(&batch.schema(), features.into());
    write_parquet(path, schema, properties(1_000_000, kv)?, [Ok(batch.clone())]).map(|_| ())
}

/// A column written after the canonical ones: one 32-bit integer per row,
/// computed from the row (the `circular` config's `rotation`). Readers of
/// canonical files ([`read_samples`]) leave it aside.
#[derive(Debug, Clone, Copy)]
pub struct IntColumn {
    pub name: &'static str,
    /// The row's value; every row written with this column has one.
    pub value: fn(&Sample) -> Option<i32>,
}

/// How media go into a data file: image bytes, and video bytes (embedded as
/// images are, or left as paths to files carried beside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaEmbed {
    pub images: Embed,
    pub videos: EmbedVideos,
}

impl From<Embed> for MediaEmbed {
    fn from(images: Embed) -> Self {
        MediaEmbed { images, videos: EmbedVideos::AsImages }
    }
}

/// Writes samples (already in output order) to one Parquet file at `path`.
pub fn write_samples(path: &Path, samples: &[Sample], embed: impl Into<MediaEmbed>) -> Result<u64> {
    write_samples_with(path, samples, embed, &[])
}

/// [`write_samples`] with `extra` columns after the canonical ones.
pub fn write_samples_with(
    path: &Path,
    samples: &[Sample],
    embed: impl Into<MediaEmbed>,
    extra: &[IntColumn],
) -> Result<u64> {
    let total: usize = samples.iter().map(estimated_row_bytes).sum();
    let chunks = samples.chunks(CHUNK_ROWS).map(|c| Ok(std::borrow::Cow::Borrowed(c)));
    write_sample_chunks(path, samples.len(), total, chunks, embed.into(), extra, has_videos(samples))
}

/// [`write_samples`] for samples that arrive one by one (a merge of sorted
/// runs): `rows` of them, whose [`estimated_row_bytes`] sum to `total`. The
/// file is the same, byte for byte, as `write_samples` of the same samples.
pub fn write_sample_stream(
    path: &Path,
    rows: usize,
    total: usize,
    mut samples: impl Iterator<Item = Result<Sample>>,
    embed: Embed,
    videos: bool,
) -> Result<u64> {
    let chunks = std::iter::from_fn(move || {
        let mut chunk = Vec::with_capacity(CHUNK_ROWS);
        for s in samples.by_ref() {
            match s {
                Ok(s) => chunk.push(s),
                Err(e) => return Some(Err(e)),
            }
            if chunk.len() == CHUNK_ROWS {
                break;
            }
        }
        (!chunk.is_empty()).then_some(Ok(std::borrow::Cow::Owned(chunk)))
    });
    write_sample_chunks(path, rows, total, chunks, embed.into(), &[], videos)
}

/// One chunk's batch: the canonical columns, then `extra`'s.
fn sample_batch(
    chunk: &[Sample],
    embed: MediaEmbed,
    schema: &SchemaRef,
    extra: &[IntColumn],
    videos: bool,
) -> Result<RecordBatch> {
    let batch = to_record_batch_with(chunk, embed.images, embed.videos, videos)?;
    if extra.is_empty() {
        return Ok(batch);
    }
    let mut columns = batch.columns().to_vec();
    for c in extra {
        let values = chunk
            .iter()
            .map(|s| (c.value)(s).ok_or_else(|| Error::Bug(format!("row \"{}\" has no {} to write", s.id, c.name))))
            .collect::<Result<Vec<i32>>>()?;
        columns.push(Arc::new(Int32Array::from(values)));
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::Bug(format!("canonical batch: {e}")))
}

fn write_sample_chunks<'a>(
    path: &Path,
    rows: usize,
    total: usize,
    chunks: impl Iterator<Item = Result<std::borrow::Cow<'a, [Sample]>>>,
    embed: MediaEmbed,
    extra: &[IntColumn],
    videos: bool,
) -> Result<u64> {
    let per_row = (total / rows.max(1)).max(1);
    let rows_per_group = (ROW_GROUP_BYTES / per_row).clamp(1, 1_000_000);
    let mut fields: Vec<FieldRef> = arrow_schema_with(videos).fields().iter().cloned().collect();
    fields.extend(extra.iter().map(|c| Arc::new(Field::new(c.name, DataType::Int32, false))));
    let plain: SchemaRef = Arc::new(Schema::new(fields));
    let mut features = hf_features_with(videos);
    if let Some(map) = features.as_object_mut() {
        for c in extra {
            map.insert(c.name.to_string(), hf_feature(&DataType::Int32));
        }
    }
    let (schema, kv) = with_hf_metadata(&plain, features);
    let props = properties(rows_per_group, kv)?;
    // Batches are built lazily, so only one chunk's image bytes are in memory.
    write_parquet(path, schema, props, chunks.map(|chunk| sample_batch(&chunk?, embed, &plain, extra, videos)))
}

fn write_err(path: &Path, e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => Error::io(path, std::io::Error::other(inner)),
        other => Error::io(path, std::io::Error::other(other.to_string())),
    }
}

/// The parquet crate asserts (panics) on a column chunk whose byte range is
/// negative or outside the file while reading rows (found by fuzzing): every
/// reader of Parquet files checks the footer's ranges first with this.
pub fn check_chunk_ranges(path: &Path, metadata: &parquet::file::metadata::ParquetMetaData, size: u64) -> Result<()> {
    for (g, rg) in metadata.row_groups().iter().enumerate() {
        for col in rg.columns() {
            let start = col.dictionary_page_offset().unwrap_or_else(|| col.data_page_offset());
            let len = col.compressed_size();
            if start < 0 || len < 0 || start.checked_add(len).is_none_or(|end| end as u64 > size) {
                return Err(Error::one(
                    Problem::new(
                        Location::file(path),
                        format!(
                            "not a readable Parquet file ({size} bytes): row group {}, column \"{}\": its data is said \
                             to be at bytes {start}..{start}+{len}, outside the file",
                            g + 1,
                            col.column_path()
                        ),
                    )
                    .field(col.column_path().to_string())
                    .help("the footer is corrupt: re-export the file"),
                ));
            }
        }
    }
    Ok(())
}

/// Runs a Parquet decode of `path`. The parquet and arrow crates assert
/// (panic) on some corrupt pages (fuzzing found an out-of-bounds bitmap in
/// arrow-buffer); such a panic becomes a located error.
pub fn guard_decoder<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::error::guard_foreign(f, |why| {
        Problem::new(
            Location::file(path),
            format!("not a readable Parquet file: its data is corrupt (the Parquet decoder failed: {why})"),
        )
        .help("the file is damaged: re-export it")
    })
}

fn not_canonical(path: &Path, what: String) -> Error {
    Error::one(
        Problem::new(Location::file(path), format!("not a blindspot canonical Parquet file: {what}"))
            .help("this reads the canonical files `blindspot variants`, `blindspot ingest` or `blindspot build` wrote"),
    )
}

fn column<'a, T: 'static>(path: &Path, batch: &'a arrow::array::RecordBatch, name: &str) -> Result<&'a T> {
    let col = batch.column_by_name(name).ok_or_else(|| not_canonical(path, format!("no column \"{name}\"")))?;
    col.as_any().downcast_ref::<T>().ok_or_else(|| not_canonical(path, format!("column \"{name}\" has another type")))
}

fn str_at(a: &StringArray, i: usize) -> Option<String> {
    (!a.is_null(i)).then(|| a.value(i).to_string())
}

fn struct_field<'a, T: 'static>(path: &Path, st: &'a StructArray, name: &str) -> Result<&'a T> {
    st.column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| not_canonical(path, format!("struct field \"{name}\" missing or of another type")))
}

/// A struct field that older files lack: `None` when absent, an error when of another type.
fn optional_struct_field<'a, T: 'static>(path: &Path, st: &'a StructArray, name: &str) -> Result<Option<&'a T>> {
    match st.column_by_name(name) {
        None => Ok(None),
        Some(c) => c
            .as_any()
            .downcast_ref::<T>()
            .map(Some)
            .ok_or_else(|| not_canonical(path, format!("struct field \"{name}\" is of another type"))),
    }
}

fn list_values(list: &ListArray, i: usize) -> ArrayRef {
    list.value(i)
}

/// Row `i` of a list-of-structs column, as its struct array.
fn struct_list(path: &Path, list: &ListArray, i: usize, column: &str) -> Result<StructArray> {
    list_values(list, i)
        .as_any()
        .downcast_ref::<StructArray>()
        .cloned()
        .ok_or_else(|| not_canonical(path, format!("{column} is not a list of structs")))
}

/// Reads a canonical Parquet file back into samples (image bytes in memory).
pub fn read_samples(path: &Path) -> Result<Vec<Sample>> {
    guard_decoder(path, || read_samples_unguarded(path))
}

fn read_samples_unguarded(path: &Path) -> Result<Vec<Sample>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| not_canonical(path, e.to_string()))?;
    check_chunk_ranges(path, builder.metadata(), size)?;
    let reader = builder.build().map_err(|e| not_canonical(path, e.to_string()))?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| Error::io(path, std::io::Error::other(e.to_string())))?;
        let id = column::<StringArray>(path, &batch, "id")?;
        let benchmark = column::<StringArray>(path, &batch, "benchmark")?;
        let split = column::<StringArray>(path, &batch, "split")?;
        let qtype = column::<StringArray>(path, &batch, "question_type")?;
        let question = column::<StringArray>(path, &batch, "question")?;
        let context = column::<StringArray>(path, &batch, "context")?;
        let options = column::<ListArray>(path, &batch, "options")?;
        let answer = column::<StringArray>(path, &batch, "answer")?;
        let answer_index = column::<Int32Array>(path, &batch, "answer_index")?;
        let answer_format = column::<StringArray>(path, &batch, "answer_format")?;
        let images = column::<ListArray>(path, &batch, "images")?;
        let image_facts = column::<ListArray>(path, &batch, "image_facts")?;
        let meta = column::<ListArray>(path, &batch, "meta")?;
        // A file without videos has no video columns.
        let video_columns = if batch.schema().column_with_name("videos").is_some() {
            Some((
                column::<ListArray>(path, &batch, "videos")?,
                column::<ListArray>(path, &batch, "video_frames")?,
                column::<ListArray>(path, &batch, "video_facts")?,
            ))
        } else {
            None
        };
        let parent_id = column::<StringArray>(path, &batch, "parent_id")?;
        let variant = column::<StringArray>(path, &batch, "variant")?;
        let variant_params = column::<StringArray>(path, &batch, "variant_params")?;
        let prompt = column::<StringArray>(path, &batch, "prompt")?;
        let expected = column::<StringArray>(path, &batch, "expected")?;
        for i in 0..batch.num_rows() {
            let fmt = answer_format.value(i);
            let Some(format) = AnswerFormat::ALL.iter().copied().find(|f| f.as_str() == fmt) else {
                return Err(not_canonical(path, format!("answer_format \"{fmt}\" in row {}", out.len() + 1)));
            };
            let opts = list_values(options, i);
            let opts = opts
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| not_canonical(path, "options are not strings".into()))?;
            let imgs = &struct_list(path, images, i, "images")?;
            let bytes = struct_field::<BinaryArray>(path, imgs, "bytes")?;
            let ipath = struct_field::<StringArray>(path, imgs, "path")?;
            let facts = &struct_list(path, image_facts, i, "image_facts")?;
            let sha = struct_field::<StringArray>(path, facts, "sha256")?;
            let width = struct_field::<Int32Array>(path, facts, "width")?;
            let height = struct_field::<Int32Array>(path, facts, "height")?;
            // Files written before images were hashed have no hash fields.
            let phash = optional_struct_field::<StringArray>(path, facts, "phash")?;
            let dhash = optional_struct_field::<StringArray>(path, facts, "dhash")?;
            let m = &struct_list(path, meta, i, "meta")?;
            let mk = struct_field::<StringArray>(path, m, "key")?;
            let mv = struct_field::<StringArray>(path, m, "value")?;
            out.push(Sample {
                id: id.value(i).to_string(),
                benchmark: benchmark.value(i).to_string(),
                split: split.value(i).to_string(),
                question_type: str_at(qtype, i),
                question: question.value(i).to_string(),
                context: str_at(context, i),
                options: (0..opts.len()).map(|j| opts.value(j).to_string()).collect(),
                answer: answer.value(i).to_string(),
                answer_index: (!answer_index.is_null(i)).then(|| answer_index.value(i)),
                answer_format: format,
                images: (0..imgs.len())
                    .map(|j| ImageRef {
                        path: str_at(ipath, j),
                        bytes: (!bytes.is_null(j)).then(|| bytes.value(j).to_vec()),
                        sha256: str_at(sha, j),
                        width: (!width.is_null(j)).then(|| width.value(j) as u32),
                        height: (!height.is_null(j)).then(|| height.value(j) as u32),
                        phash: phash.and_then(|a| str_at(a, j)),
                        dhash: dhash.and_then(|a| str_at(a, j)),
                        source: None,
                    })
                    .collect(),
                videos: match video_columns {
                    Some(columns) => read_videos(path, columns, i)?,
                    None => Vec::new(),
                },
                meta: (0..m.len()).map(|j| (mk.value(j).to_string(), mv.value(j).to_string())).collect(),
                parent_id: str_at(parent_id, i),
                variant: str_at(variant, i),
                variant_params: str_at(variant_params, i),
                prompt: str_at(prompt, i),
                expected: str_at(expected, i),
            });
        }
    }
    Ok(out)
}

/// Row `i`'s videos from the three video columns.
fn read_videos(
    path: &Path,
    (files, frames, facts): (&ListArray, &ListArray, &ListArray),
    i: usize,
) -> Result<Vec<VideoRef>> {
    let files = &struct_list(path, files, i, "videos")?;
    let bytes = struct_field::<BinaryArray>(path, files, "bytes")?;
    let vpath = struct_field::<StringArray>(path, files, "path")?;
    let frame_lists = list_values(frames, i);
    let frame_lists = frame_lists
        .as_any()
        .downcast_ref::<ListArray>()
        .ok_or_else(|| not_canonical(path, "video_frames is not a list of lists".into()))?;
    let facts = &struct_list(path, facts, i, "video_facts")?;
    let sha = struct_field::<StringArray>(path, facts, "sha256")?;
    let size = struct_field::<Int64Array>(path, facts, "size")?;
    let duration = struct_field::<Float64Array>(path, facts, "duration")?;
    let fps = struct_field::<Float64Array>(path, facts, "fps")?;
    let frame_count = struct_field::<Int64Array>(path, facts, "frame_count")?;
    let width = struct_field::<Int32Array>(path, facts, "width")?;
    let height = struct_field::<Int32Array>(path, facts, "height")?;
    let codec = struct_field::<StringArray>(path, facts, "codec")?;
    let frame_sha = struct_field::<ListArray>(path, facts, "frame_sha256")?;
    if files.len() != facts.len() || frame_lists.len() != facts.len() {
        return Err(not_canonical(
            path,
            format!("row {}: videos, video_frames and video_facts differ in length", i + 1),
        ));
    }
    let mut out = Vec::with_capacity(files.len());
    for j in 0..files.len() {
        let fr = &struct_list(path, frame_lists, j, "video_frames")?;
        let fbytes = struct_field::<BinaryArray>(path, fr, "bytes")?;
        let fpath = struct_field::<StringArray>(path, fr, "path")?;
        let shas = list_values(frame_sha, j);
        let shas = shas
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| not_canonical(path, "video_facts.frame_sha256 is not strings".into()))?;
        let opt_f64 = |a: &Float64Array| (!a.is_null(j)).then(|| a.value(j));
        let opt_i64 = |a: &Int64Array| (!a.is_null(j)).then(|| a.value(j) as u64);
        let opt_i32 = |a: &Int32Array| (!a.is_null(j)).then(|| a.value(j) as u32);
        out.push(VideoRef {
            path: str_at(vpath, j),
            bytes: (!bytes.is_null(j)).then(|| bytes.value(j).to_vec()),
            sha256: str_at(sha, j),
            size: opt_i64(size),
            duration: opt_f64(duration),
            fps: opt_f64(fps),
            frame_count: opt_i64(frame_count),
            width: opt_i32(width),
            height: opt_i32(height),
            codec: str_at(codec, j),
            frames: (0..fr.len())
                .map(|k| ImageRef {
                    path: str_at(fpath, k),
                    bytes: (!fbytes.is_null(k)).then(|| fbytes.value(k).to_vec()),
                    sha256: (k < shas.len()).then(|| str_at(shas, k)).flatten(),
                    ..ImageRef::default()
                })
                .collect(),
            source: None,
        });
    }
    Ok(out)
}

/// An embedded image whose bytes do not hash to the sha256 its row states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageHashMismatch {
    /// 1-based row of the file.
    pub row: u64,
    pub id: String,
    /// 0-based position in the row's `images` list.
    pub image: usize,
    /// `image_facts.sha256` as written.
    pub stated: String,
    /// The sha256 of the embedded bytes.
    pub actual: String,
}

/// Every embedded image of a canonical Parquet file whose bytes do not hash
/// to its `image_facts.sha256`, read a few rows at a time (only the `id`,
/// `images` and `image_facts` columns) so any size of file is checked in
/// bounded memory. `None` when the file has no such columns (a duplicates
/// config). An image stored as a path only, or without a stated hash, has
/// nothing to compare.
pub fn image_hash_mismatches(path: &Path) -> Result<Option<Vec<ImageHashMismatch>>> {
    guard_decoder(path, || image_hash_mismatches_unguarded(path))
}

fn image_hash_mismatches_unguarded(path: &Path) -> Result<Option<Vec<ImageHashMismatch>>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| not_canonical(path, e.to_string()))?;
    check_chunk_ranges(path, builder.metadata(), size)?;
    let wanted = ["id", "images", "image_facts"];
    let roots: Vec<usize> = {
        let fields = builder.parquet_schema().root_schema().get_fields();
        wanted.iter().filter_map(|w| fields.iter().position(|f| f.name() == *w)).collect()
    };
    if roots.len() != wanted.len() {
        return Ok(None);
    }
    let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), roots);
    // Images are embedded: a few rows at a time bounds the memory.
    let reader =
        builder.with_projection(mask).with_batch_size(16).build().map_err(|e| not_canonical(path, e.to_string()))?;
    let mut out = Vec::new();
    let mut row = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| Error::io(path, std::io::Error::other(e.to_string())))?;
        let id = column::<StringArray>(path, &batch, "id")?;
        let images = column::<ListArray>(path, &batch, "images")?;
        let image_facts = column::<ListArray>(path, &batch, "image_facts")?;
        for i in 0..batch.num_rows() {
            row += 1;
            let imgs = &struct_list(path, images, i, "images")?;
            let bytes = struct_field::<BinaryArray>(path, imgs, "bytes")?;
            let facts = &struct_list(path, image_facts, i, "image_facts")?;
            let sha = struct_field::<StringArray>(path, facts, "sha256")?;
            for j in 0..imgs.len().min(facts.len()) {
                if bytes.is_null(j) || sha.is_null(j) {
                    continue;
                }
                let actual = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes.value(j)));
                if !actual.eq_ignore_ascii_case(sha.value(j)) {
                    out.push(ImageHashMismatch {
                        row,
                        id: id.value(i).to_string(),
                        image: j,
                        stated: sha.value(j).to_string(),
                        actual,
                    });
                }
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{AnswerFormat, ImageRef, Sample};

    #[test]
    fn canonical_parquet_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sample::new("a", "Which?", "y");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = vec!["x".into(), "y".into()];
        s.answer_index = Some(1);
        s.meta.insert("k".into(), "v".into());
        s.images.push(ImageRef {
            path: None,
            bytes: Some(vec![1, 2, 3]),
            sha256: Some("h".into()),
            width: Some(2),
            height: Some(1),
            phash: Some("00000000000000ab".into()),
            dhash: None,
            source: None,
        });
        s.variant = Some("option_shuffle".into());
        s.prompt = Some("p".into());
        let path = dir.path().join("x.parquet");
        write_samples(&path, std::slice::from_ref(&s), crate::sample::Embed::Images).unwrap();
        assert_eq!(read_samples(&path).unwrap(), vec![s]);
    }

    #[test]
    fn an_image_that_is_not_its_stated_hash_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let image = |bytes: &[u8], sha: String| ImageRef {
            bytes: Some(bytes.to_vec()),
            sha256: Some(sha),
            ..ImageRef::default()
        };
        let right = hex::encode(<sha2::Sha256 as sha2::Digest>::digest([1u8, 2, 3]));
        let mut a = Sample::new("a", "q", "y");
        a.images.push(image(&[1, 2, 3], right.clone()));
        let mut b = Sample::new("b", "q", "y");
        b.images.push(image(&[1, 2, 3], right.clone()));
        b.images.push(image(&[9, 9], right.clone()));
        let path = dir.path().join("x.parquet");
        write_samples(&path, &[a, b], crate::sample::Embed::Images).unwrap();
        let found = image_hash_mismatches(&path).unwrap().unwrap();
        assert_eq!(
            found,
            vec![ImageHashMismatch {
                row: 2,
                id: "b".into(),
                image: 1,
                stated: right,
                actual: hex::encode(<sha2::Sha256 as sha2::Digest>::digest([9u8, 9])),
            }]
        );
    }
}
