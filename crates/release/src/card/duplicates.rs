//! The card's duplicates and leakage section: near-duplicate questions within
//! the set and copies of a training split.

use std::fmt::Write;

use crate::io::escape::markdown as md;

/// Duplicates within the set and copies of a training split.
pub(crate) fn duplicates_section(out: &mut String, e: &crate::EmbedStage) {
    let Some(r) = &e.dups else { return };
    let j = r.summary();
    out.push_str("## Duplicates and leakage\n\n");
    let _ = write!(
        out,
        "{} exact-duplicate clusters ({} questions; same text once lowercased and punctuation folded)",
        j.exact.clusters, j.exact.samples_in_clusters
    );
    if let Some(t) = r.threshold {
        let _ = write!(
            out,
            "; {} near-duplicate pairs (cosine of the question+options embeddings >= {t}) in {} clusters ({} questions)",
            j.near.as_ref().map_or(0, |n| n.pairs),
            j.near.as_ref().map_or(0, |n| n.clusters),
            j.near.as_ref().map_or(0, |n| n.samples_in_clusters)
        );
    }
    out.push('.');
    if let Some(n) = r.n_train {
        let _ = write!(
            out,
            " Against the {n} questions of the training split {}: {} questions have an exact copy",
            md::code(e.train_written.as_deref().unwrap_or("?")),
            j.train.as_ref().map_or(0, |t| t.samples_with_exact_copy)
        );
        if r.threshold.is_some() {
            let _ = write!(out, ", {} a near copy", near_copies(&j));
        }
        out.push('.');
    }
    if let Some(im) = &r.images {
        let _ = write!(
            out,
            " Images: {} near-duplicate clusters of {} distinct images (both perceptual hashes within {} bits of 64; {} \
             images hashed)",
            im.clusters.len(),
            im.images,
            im.threshold,
            im.hashed
        );
        write_clusters(out, im.clusters.iter().map(|c| c.iter().map(|e| (e.path.as_deref(), &e.ids[..])).collect()));
        if let Some((n, m)) = &im.train {
            let matched = crate::embed::image_dups::ImageDups::matched(m);
            let _ = write!(out, "; {matched} benchmark images are near one of the {n} training images");
        }
        out.push('.');
    }
    if let Some(v) = &r.videos {
        video_sentence(out, v);
    }
    let _ = writeln!(
        out,
        " Every pair is in config `duplicates` ({} rows), the clusters in `report/duplicates.json`.{}\n",
        r.pairs.len(),
        if e.dedup_removed.is_empty() {
            String::new()
        } else {
            format!(
                " With `prune-duplicates`, {} questions were dropped (one kept per cluster, leaked ones removed), each \
                 with its reason in `report/duplicates.json`; they are in config `removed`.",
                e.dedup_removed.len()
            )
        }
    );
}

/// Up to ten clusters of media files, each as "`path` (ids) ~ `path` (ids)", and "; ..."
/// when there are more.
fn write_clusters<'a>(out: &mut String, clusters: impl ExactSizeIterator<Item = Vec<(Option<&'a str>, &'a [String])>>) {
    let n = clusters.len();
    for c in clusters.take(10) {
        let names: Vec<String> = c
            .iter()
            .map(|(path, ids)| {
                let ids: Vec<String> = ids.iter().map(|id| md::literal(id)).collect();
                format!("{} ({})", md::code(path.unwrap_or("?")), ids.join(", "))
            })
            .collect();
        let _ = write!(out, "; {}", names.join(" ~ "));
    }
    if n > 10 {
        out.push_str("; ...");
    }
}

/// The near-duplicate videos, as the images' sentence has them; the decoder
/// is named by kind only, so the card does not depend on where ffmpeg lies.
fn video_sentence(out: &mut String, v: &crate::embed::video_dups::VideoDups) {
    let clusters = match v.clusters.len() {
        1 => "1 near-duplicate cluster".to_string(),
        n => format!("{n} near-duplicate clusters"),
    };
    let fractions = crate::sample::image_hash::VIDEO_FRACTIONS.map(|f| f.to_string()).join(", ");
    let _ = write!(
        out,
        " Videos: {clusters} of {} distinct videos (frames at {fractions} of each video's duration, both perceptual \
         hashes within {} bits of 64 at every one; {} videos compared{})",
        v.videos,
        v.threshold,
        v.checked,
        if v.decoder.is_some() { ", decoded by ffmpeg" } else { "" }
    );
    write_clusters(out, v.clusters.iter().map(|c| c.iter().map(|e| (e.path.as_deref(), &e.ids[..])).collect()));
    for (why, n) in &v.not_checked {
        let _ = write!(out, "; {n} videos {why}");
    }
    out.push('.');
}

/// Questions with a near copy in the training split (0 when not searched).
pub(crate) fn near_copies(j: &crate::embed::dups::DupsFile) -> usize {
    j.train.as_ref().and_then(|t| t.samples_with_near_copy).unwrap_or(0)
}
