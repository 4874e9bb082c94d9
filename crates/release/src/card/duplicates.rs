//! The card's duplicates and leakage section: near-duplicate questions within
//! the set and copies of a training split.

use serde::Serialize;

/// What `templates/duplicates.md` shows.
#[derive(Serialize)]
struct DuplicatesView<'a> {
    exact_clusters: usize,
    exact_questions: usize,
    /// Near-duplicates by embedding, when a threshold was set.
    near: Option<NearView>,
    train: Option<TrainView<'a>>,
    images: Option<MediaView<'a>>,
    videos: Option<MediaView<'a>>,
    /// Rows of the `duplicates` config.
    pairs: usize,
    /// Questions `prune-duplicates` dropped.
    dropped: usize,
}

#[derive(Serialize)]
struct NearView {
    threshold: f64,
    pairs: usize,
    clusters: usize,
    questions: usize,
}

/// Copies of the training split's questions.
#[derive(Serialize)]
struct TrainView<'a> {
    questions: usize,
    file: &'a str,
    exact: usize,
    /// `None` when no near-duplicate search ran.
    near: Option<usize>,
}

/// Near-duplicate images or videos: the counts, up to ten clusters shown.
#[derive(Serialize)]
struct MediaView<'a> {
    clusters: usize,
    distinct: usize,
    threshold: u32,
    hashed: usize,
    shown: Vec<Vec<Member<'a>>>,
    /// More than the clusters shown.
    more: bool,
    /// Images only: benchmark images near a training image, of how many.
    train: Option<MediaTrain>,
    /// Videos only: the frame fractions compared, whether ffmpeg decoded
    /// them, and why the rest were not compared.
    fractions: String,
    checked: usize,
    ffmpeg: bool,
    not_checked: Vec<NotChecked<'a>>,
}

#[derive(Serialize)]
struct Member<'a> {
    path: &'a str,
    ids: &'a [String],
}

#[derive(Serialize)]
struct MediaTrain {
    matched: usize,
    images: usize,
}

#[derive(Serialize)]
struct NotChecked<'a> {
    videos: usize,
    why: &'a str,
}

/// A cluster's member: its path (`?` when it has none) and the questions showing it.
fn member<'a>(path: &'a Option<String>, ids: &'a [String]) -> Member<'a> {
    Member { path: path.as_deref().unwrap_or("?"), ids }
}

/// The first ten clusters of media files, each member by path and questions.
fn shown<'a>(clusters: impl Iterator<Item = Vec<Member<'a>>>) -> Vec<Vec<Member<'a>>> {
    clusters.take(10).collect()
}

/// Duplicates within the set and copies of a training split (`templates/duplicates.md`).
pub(crate) fn duplicates_section(out: &mut String, e: &crate::EmbedStage) {
    let Some(r) = &e.dups else { return };
    let j = r.summary();
    let view = DuplicatesView {
        exact_clusters: j.exact.clusters,
        exact_questions: j.exact.samples_in_clusters,
        near: r.threshold.map(|threshold| NearView {
            threshold,
            pairs: j.near.as_ref().map_or(0, |n| n.pairs),
            clusters: j.near.as_ref().map_or(0, |n| n.clusters),
            questions: j.near.as_ref().map_or(0, |n| n.samples_in_clusters),
        }),
        train: r.n_train.map(|questions| TrainView {
            questions,
            file: e.train_written.as_deref().unwrap_or("?"),
            exact: j.train.as_ref().map_or(0, |t| t.samples_with_exact_copy),
            near: r.threshold.map(|_| near_copies(&j)),
        }),
        images: r.images.as_ref().map(|im| MediaView {
            clusters: im.clusters.len(),
            distinct: im.images,
            threshold: im.threshold,
            hashed: im.hashed,
            shown: shown(im.clusters.iter().map(|c| c.iter().map(|m| member(&m.path, &m.ids[..])).collect())),
            more: im.clusters.len() > 10,
            train: im
                .train
                .as_ref()
                .map(|(n, m)| MediaTrain { matched: crate::embed::image_dups::ImageDups::matched(m), images: *n }),
            fractions: String::new(),
            checked: 0,
            ffmpeg: false,
            not_checked: Vec::new(),
        }),
        videos: r.videos.as_ref().map(|v| MediaView {
            clusters: v.clusters.len(),
            distinct: v.videos,
            threshold: v.threshold,
            hashed: 0,
            shown: shown(v.clusters.iter().map(|c| c.iter().map(|m| member(&m.path, &m.ids[..])).collect())),
            more: v.clusters.len() > 10,
            train: None,
            fractions: crate::sample::image_hash::VIDEO_FRACTIONS.map(|f| f.to_string()).join(", "),
            checked: v.checked,
            // The decoder is named by kind only, so the card does not depend on where ffmpeg lies.
            ffmpeg: v.decoder.is_some(),
            not_checked: v.not_checked.iter().map(|(why, n)| NotChecked { videos: *n, why }).collect(),
        }),
        pairs: r.pairs.len(),
        dropped: e.dedup_removed.len(),
    };
    out.push_str(&super::template::render("duplicates.md", &view));
}

/// Questions with a near copy in the training split (0 when not searched).
pub(crate) fn near_copies(j: &crate::embed::dups::DupsFile) -> usize {
    j.train.as_ref().and_then(|t| t.samples_with_near_copy).unwrap_or(0)
}
