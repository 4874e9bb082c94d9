//! The card's sources and rebuild sections: each input by name, size and
//! sha256, the images' digest, and the commands that rebuild the release.

use std::fmt::Write;

use crate::io::escape::{markdown as md, shell};
use crate::spec::Pipeline;

/// Where the data came from (each input by name, size and sha256, the images by
/// their count and list digest) and how to rebuild the release from them.
pub(super) fn sources_section(out: &mut String, p: &Pipeline, ing: &crate::ingest::Ingested) {
    let ds = &p.dataset;
    out.push_str("## Sources\n\n");
    if let Some(home) = &ds.homepage {
        let _ = writeln!(out, "Origin: <{home}>.\n");
    }
    out.push_str("| source | bytes | sha256 | path in the pipeline |\n|---|---:|---|---|\n");
    let base = p.path.parent().unwrap_or(std::path::Path::new("."));
    for i in &ing.inputs {
        let name = i.path.file_name().map_or_else(|| i.path.to_string_lossy(), |f| f.to_string_lossy());
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | {} |",
            md::literal(&name),
            i.bytes,
            i.sha256,
            md::literal(&crate::manifest::relative_to(&i.path, base))
        );
    }
    if !ing.images.is_empty() {
        let _ = writeln!(
            out,
            "| {} image files | – | `{}` | {} |",
            ing.images.len(),
            crate::manifest::images_digest(ing),
            p.ingest
                .images_dir
                .as_ref()
                .map_or("–".to_string(), |d| md::literal(&crate::manifest::relative_to(d, base)))
        );
        out.push_str(
            "\nThe images' sha256 is taken over their list (each file's path, a NUL, its sha256, a newline, in path \
             order); each row's `image_facts` holds the sha256 of its own images.\n",
        );
    }
    // The pipeline as a repository holds it: `pipelines/<file>` for the usual layout.
    let file = p.path.file_name().map_or("?".into(), |f| f.to_string_lossy().to_string());
    let pipeline = match p.path.parent().and_then(|d| d.file_name()) {
        Some(d) if d == "pipelines" => format!("pipelines/{file}"),
        _ => file,
    };
    let lock = crate::lock::path_for(std::path::Path::new(&pipeline)).to_string_lossy().replace('\\', "/");
    out.push_str("\n## Rebuild\n\n");
    let _ = write!(
        out,
        "This release was built from the pipeline {}; its lock file {} records this version and every file's \
         sha256. ",
        md::code(&pipeline),
        md::code(&lock)
    );
    match &ds.repository {
        Some(repo) => {
            let _ = write!(out, "Both live in <{repo}>. ");
        }
        None => out.push_str("(The pipeline names no repository; `[dataset] repository` would name it here.) "),
    }
    // Every word from the pipeline is quoted for the shell a reader pastes this into.
    let (pipeline_word, lock_word) = (shell::word(&pipeline), shell::word(&lock));
    let block = format!(
        "{}git checkout $(git log -1 --format=%H -G'\"version\": \"{}\"' -- {lock_word})\n\
         blindspot build {pipeline_word}\n\
         blindspot build --check {pipeline_word}  # compares every byte with the lock\n",
        ds.repository
            .as_deref()
            .map(shell::word)
            .map_or(String::new(), |r| format!("git clone {r} && cd \"$(basename {r} .git)\"\n")),
        shell::in_single_quotes(&ds.version),
    );
    let fence = md::fence_for(&block);
    let _ = writeln!(
        out,
        "In the repository that holds them, check out the commit that locked this version, put the sources above \
         where the pipeline names them, and build:\n\n{fence}\n{block}{fence}\n"
    );
    out.push_str(
        "`manifest.json` lists the sha256 of every file; a rebuild from the same inputs, pipeline and seed gives \
         identical bytes.\n",
    );
}
