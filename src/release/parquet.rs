//! Parquet writing of canonical rows: fixed Arrow schema, zstd, row groups of
//! about 100 MB, the `huggingface` schema-metadata key (so `datasets` types
//! image columns as `Image`), and `created_by` pinned so bytes do not change
//! with the parquet crate's version.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};

use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Result};
use crate::sample::{Embed, Sample, arrow_schema, to_record_batch};

/// Target uncompressed size of one row group.
const ROW_GROUP_BYTES: usize = 100 * 1024 * 1024;
/// Rows converted to Arrow at a time (bounds memory when images are embedded).
const CHUNK_ROWS: usize = 1024;

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
            "feature": {"sha256": value("string"), "width": value("int32"), "height": value("int32")},
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

fn estimated_row_bytes(s: &Sample) -> usize {
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
    64 + text + images
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

/// Writes samples (already in output order) to one Parquet file at `path`.
pub fn write_samples(path: &Path, samples: &[Sample], embed: Embed) -> Result<u64> {
    let total: usize = samples.iter().map(estimated_row_bytes).sum();
    let per_row = (total / samples.len().max(1)).max(1);
    let rows_per_group = (ROW_GROUP_BYTES / per_row).clamp(1, 1_000_000);
    let (schema, kv) = with_hf_metadata(&arrow_schema(), hf_features());
    let props = properties(rows_per_group, kv)?;
    // Batches are built lazily, so only one chunk's image bytes are in memory.
    write_parquet(path, schema, props, samples.chunks(CHUNK_ROWS).map(|chunk| to_record_batch(chunk, embed)))
}

fn write_err(path: &Path, e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => Error::io(path, std::io::Error::other(inner)),
        other => Error::io(path, std::io::Error::other(other.to_string())),
    }
}

/// Writes `bytes` to `path` durably.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    f.sync_all().map_err(|e| Error::io(path, e))
}
