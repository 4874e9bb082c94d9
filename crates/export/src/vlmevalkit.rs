//! VLMEvalKit: one `<Name>_<config>.tsv` per config in the harness's TSV
//! layout — `index, question, [hint], A.., answer, category, [image |
//! image_path], [rotation], blindspot_id` — which VLMEvalKit loads as a custom dataset
//! from its data root. Multiple choice gives `A..` columns and the letter as
//! `answer`; other formats give the answer text.
//!
//! `image` is base64 (a Python list literal of base64 strings for several
//! images, which VLMEvalKit reads with `eval`: every string in it is written
//! by the Python-literal writer, so no path or value can close its quote). Configs whose rows have no image (no_image, mirage, guess,
//! caption, phantom, phantom0) get no image column at all: VLMEvalKit drops
//! rows whose image is empty. When images are references without bytes
//! (a benchmark ingested without its image folder), `image_path` carries the
//! paths instead. The `circular` config (every CircularEval rotation, one
//! file) has `rotation`, the row's k. `blindspot_id` is an extra column
//! VLMEvalKit keeps in its result files; `manifest.json` maps each `index`
//! to the id as well.

use std::path::Path;

use base64::Engine;

use super::{config_problem, file_safe, gold_label, letter};
use crate::error::{Error, Result};
use crate::io::escape::python;
use crate::io::fs::write_json;
use crate::io::release_dir::Config;
use crate::predictions::export_manifest::{ExportManifest, ImageColumn, TsvFile, TsvRow};
use crate::sample::Sample;
use crate::variants::harness_question;

fn image_column(c: &Config) -> ImageColumn {
    if c.image_free() {
        ImageColumn::None
    } else if c.rows.iter().flat_map(|r| &r.images).any(|i| i.bytes.is_some()) {
        ImageColumn::Base64
    } else {
        ImageColumn::Paths
    }
}

fn image_cell(s: &Sample, col: ImageColumn) -> String {
    let cells: Vec<String> = match col {
        ImageColumn::None => return String::new(),
        ImageColumn::Base64 => s
            .images
            .iter()
            .filter_map(|i| i.bytes.as_ref())
            .map(|b| base64::engine::general_purpose::STANDARD.encode(b))
            .collect(),
        ImageColumn::Paths => s.images.iter().filter_map(|i| i.path.clone()).collect(),
    };
    // VLMEvalKit's `toliststr` evaluates a cell that looks like a list: several
    // images, or one path that starts with `[` and ends with `]`, are written
    // as a Python list literal whose strings cannot close their quotes.
    match &cells[..] {
        [] => String::new(),
        [one] if !python::evaluated_as_list(one) => one.clone(),
        _ => python::list_literal(cells.iter().map(String::as_str)),
    }
}

/// The TSV file name of a config.
pub fn tsv_name(name: &str, config: &str) -> String {
    format!("{}_{}.tsv", file_safe(name), file_safe(config))
}

/// Writes one TSV per non-empty config and `manifest.json` into `out` (an existing folder).
pub fn export(configs: &[Config], name: &str, out: &Path) -> Result<ExportManifest> {
    let mut files = Vec::new();
    for c in configs.iter().filter(|c| !c.rows.is_empty()) {
        let file = tsv_name(name, &c.name);
        let path = out.join(&file);
        let n_options = c.rows.iter().map(|r| r.options.len()).max().unwrap_or(0);
        if n_options > 26 {
            return Err(config_problem(c, format!("{n_options} options: more than the letters A-Z")));
        }
        // The TSV has no video column: a video question written without its
        // video would be a different, text-only question.
        if let Some(r) = c.rows.iter().find(|r| !r.videos.is_empty()) {
            return Err(config_problem(
                c,
                format!(
                    "row \"{}\" has a video, and blindspot's VLMEvalKit export writes image TSVs only; export the \
                     video questions with --to lmms-eval",
                    r.id
                ),
            ));
        }
        let hint = c.rows.iter().any(|r| r.context.is_some());
        let img = image_column(c);
        let mut header: Vec<String> = vec!["index".into(), "question".into()];
        if hint {
            header.push("hint".into());
        }
        header.extend((0..n_options).map(letter));
        header.extend(["answer".into(), "category".into()]);
        match img {
            ImageColumn::None => {}
            ImageColumn::Base64 => header.push("image".into()),
            ImageColumn::Paths => header.push("image_path".into()),
        }
        let rotation = super::has_rotations(c);
        if rotation {
            header.push(crate::variants::ROTATION_COLUMN.into());
        }
        header.push("blindspot_id".into());
        let mut w = csv::WriterBuilder::new()
            .delimiter(b'\t')
            .from_path(&path)
            .map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
        let io = |e: csv::Error| Error::io(&path, std::io::Error::other(e));
        w.write_record(&header).map_err(io)?;
        let mut rows = Vec::with_capacity(c.rows.len());
        for (index, r) in c.rows.iter().enumerate() {
            let mut rec: Vec<String> = vec![index.to_string(), harness_question(r)];
            if hint {
                rec.push(r.context.clone().unwrap_or_default());
            }
            rec.extend((0..n_options).map(|i| r.options.get(i).cloned().unwrap_or_default()));
            rec.push(gold_label(r));
            rec.push(r.question_type.clone().unwrap_or_default());
            if img != ImageColumn::None {
                rec.push(image_cell(r, img));
            }
            if rotation {
                rec.push(crate::variants::rotation(r).map_or_else(String::new, |k| k.to_string()));
            }
            rec.push(r.id.clone());
            w.write_record(&rec).map_err(io)?;
            rows.push(TsvRow { index, id: r.id.clone() });
        }
        let f = w.into_inner().map_err(|e| Error::io(&path, std::io::Error::other(e.to_string())))?;
        f.sync_all().map_err(|e| Error::io(&path, e))?;
        files.push(TsvFile { file, config: c.name.clone(), image_column: img, rows });
    }
    let manifest = ExportManifest::Vlmevalkit { name: name.to_string(), files };
    write_json(&out.join("manifest.json"), &manifest)?;
    Ok(manifest)
}
