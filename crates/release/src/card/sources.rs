//! The card's sources and rebuild sections (`templates/sources.md`): each
//! input by name, size and sha256, the images' digest, and the commands that
//! rebuild the release.

use serde::Serialize;

use crate::spec::Pipeline;

/// What `templates/sources.md` shows.
#[derive(Serialize)]
struct SourcesView<'a> {
    homepage: Option<&'a str>,
    inputs: Vec<InputRow>,
    images: Option<ImagesRow>,
    /// The pipeline as a repository holds it: `pipelines/<file>` for the usual layout.
    pipeline: String,
    /// Its lock file, beside it.
    lock: String,
    repository: Option<&'a str>,
    version: &'a str,
}

/// A benchmark file the release was read from.
#[derive(Serialize)]
struct InputRow {
    name: String,
    bytes: u64,
    sha256: String,
    /// Relative to the pipeline's folder.
    path: String,
}

/// The image files, by their number and the digest of their list.
#[derive(Serialize)]
struct ImagesRow {
    files: usize,
    sha256: String,
    dir: Option<String>,
}

/// Where the data came from (each input by name, size and sha256, the images by
/// their count and list digest) and how to rebuild the release from them.
pub(super) fn sources_section(out: &mut String, p: &Pipeline, ing: &crate::ingest::Ingested) {
    let base = p.path.parent().unwrap_or(std::path::Path::new("."));
    let file = p.path.file_name().map_or("?".into(), |f| f.to_string_lossy().to_string());
    let pipeline = match p.path.parent().and_then(|d| d.file_name()) {
        Some(d) if d == "pipelines" => format!("pipelines/{file}"),
        _ => file,
    };
    let lock = crate::spec::plan::lock_path(std::path::Path::new(&pipeline)).to_string_lossy().replace('\\', "/");
    let view = SourcesView {
        homepage: p.dataset.homepage.as_deref(),
        inputs: ing
            .inputs
            .iter()
            .map(|i| InputRow {
                name: i.path.file_name().map_or_else(|| i.path.to_string_lossy(), |f| f.to_string_lossy()).to_string(),
                bytes: i.bytes,
                sha256: i.sha256.clone(),
                path: crate::manifest::relative_to(&i.path, base),
            })
            .collect(),
        images: (!ing.images.is_empty()).then(|| ImagesRow {
            files: ing.images.len(),
            sha256: crate::manifest::images_digest(ing),
            dir: p.ingest.images_dir.as_ref().map(|d| crate::manifest::relative_to(d, base)),
        }),
        pipeline,
        lock,
        repository: p.dataset.repository.as_deref(),
        version: &p.dataset.version,
    };
    out.push_str(&super::template::render("sources.md", &view));
}
