//! `embeddings.parquet`: one row per sample, in canonical id order.
//!
//! | column | type |
//! |---|---|
//! | `id` | string |
//! | `question` | fixed_size_list<float32>[dim] |
//! | `options` | list<fixed_size_list<float32>[dim]> (empty for open questions) |
//! | `question_options` | fixed_size_list<float32>[dim]: the question and each option on its own line |
//!
//! The Arrow schema metadata key `blindspot.embed` records the model
//! fingerprint, dimension, pooling and normalisation.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, FixedSizeListBuilder, Float32Builder, ListBuilder, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};

use super::SampleEmbeddings;
use crate::error::{Error, Result};

fn vector_type(dim: usize) -> DataType {
    DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, false)), dim as i32)
}

fn vector_builder(dim: usize) -> FixedSizeListBuilder<Float32Builder> {
    FixedSizeListBuilder::new(Float32Builder::new(), dim as i32).with_field(Arc::new(Field::new(
        "item",
        DataType::Float32,
        false,
    )))
}

/// The embeddings as one Arrow batch.
pub fn to_batch(e: &SampleEmbeddings) -> Result<RecordBatch> {
    let dim = e.dim;
    let meta = serde_json::json!({
        "model": e.model,
        "dim": dim,
        "pooling": "mean",
        "normalize": "l2",
        "question_options": "question, then each option on its own line",
    });
    let schema = Arc::new(
        Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("question", vector_type(dim), false),
            Field::new("options", DataType::List(Arc::new(Field::new("item", vector_type(dim), false))), false),
            Field::new("question_options", vector_type(dim), false),
        ])
        .with_metadata(std::collections::HashMap::from([("blindspot.embed".to_string(), meta.to_string())])),
    );
    let mut id = StringBuilder::new();
    let mut q = vector_builder(dim);
    let mut opts =
        ListBuilder::new(vector_builder(dim)).with_field(Arc::new(Field::new("item", vector_type(dim), false)));
    let mut qo = vector_builder(dim);
    for (sid, row) in e.ids.iter().zip(&e.rows) {
        id.append_value(sid);
        q.values().append_slice(&row.question);
        q.append(true);
        for o in &row.options {
            opts.values().values().append_slice(o);
            opts.values().append(true);
        }
        opts.append(true);
        qo.values().append_slice(&row.question_options);
        qo.append(true);
    }
    let cols: Vec<ArrayRef> =
        vec![Arc::new(id.finish()), Arc::new(q.finish()), Arc::new(opts.finish()), Arc::new(qo.finish())];
    RecordBatch::try_new(schema, cols).map_err(|err| Error::Bug(format!("embeddings batch: {err}")))
}

/// Writes `embeddings.parquet` to `path` (not atomically: callers write to a temporary path).
pub fn write(path: &Path, e: &SampleEmbeddings) -> Result<()> {
    crate::io::parquet::write_batch(path, &to_batch(e)?)
}
