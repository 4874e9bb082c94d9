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
    images: Option<ImagesView<'a>>,
    videos: Option<VideosView<'a>>,
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

/// Near-duplicate images: the counts, up to ten clusters shown.
#[derive(Serialize)]
struct ImagesView<'a> {
    clusters: Clusters<'a>,
    distinct: usize,
    threshold: u32,
    hashed: usize,
    /// Benchmark images near a training image, of how many.
    train: Option<MediaTrain>,
}

/// Near-duplicate videos: the counts, up to ten clusters shown, the frame
/// fractions compared, whether ffmpeg decoded them, and why the rest were
/// not compared.
#[derive(Serialize)]
struct VideosView<'a> {
    clusters: Clusters<'a>,
    distinct: usize,
    threshold: u32,
    fractions: String,
    checked: usize,
    ffmpeg: bool,
    not_checked: Vec<NotChecked<'a>>,
}

/// Clusters of media files: how many, the first ten, and whether there are more.
#[derive(Serialize)]
struct Clusters<'a> {
    count: usize,
    shown: Vec<Vec<Member<'a>>>,
    more: bool,
}

impl<'a> Clusters<'a> {
    fn of<E>(clusters: &'a [Vec<E>], member: impl Fn(&'a E) -> Member<'a>) -> Clusters<'a> {
        Clusters {
            count: clusters.len(),
            shown: clusters.iter().take(10).map(|c| c.iter().map(&member).collect()).collect(),
            more: clusters.len() > 10,
        }
    }
}

/// A cluster's member: its path (`?` when it has none) and the questions showing it.
#[derive(Serialize)]
struct Member<'a> {
    path: &'a str,
    ids: &'a [String],
}

impl<'a> Member<'a> {
    fn of(path: &'a Option<String>, ids: &'a [String]) -> Member<'a> {
        Member { path: path.as_deref().unwrap_or("?"), ids }
    }
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
        images: r.images.as_ref().map(|im| ImagesView {
            clusters: Clusters::of(&im.clusters, |m| Member::of(&m.path, &m.ids)),
            distinct: im.images,
            threshold: im.threshold,
            hashed: im.hashed,
            train: im
                .train
                .as_ref()
                .map(|(n, m)| MediaTrain { matched: crate::embed::image_dups::ImageDups::matched(m), images: *n }),
        }),
        videos: r.videos.as_ref().map(|v| VideosView {
            clusters: Clusters::of(&v.clusters, |m| Member::of(&m.path, &m.ids)),
            distinct: v.videos,
            threshold: v.threshold,
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
