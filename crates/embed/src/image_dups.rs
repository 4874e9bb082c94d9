//! Near-duplicate images: the images of a benchmark clustered by perceptual
//! hash (`phash` and `dhash` both within the threshold, complete linkage:
//! [`crate::sample::image_hash`]), and the benchmark's images matched against a
//! training split's or against a published list of hashes.
//! The image side of `blindspot dups`; questions are compared in [`super::dups`].

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::sample::Sample;
use crate::sample::image_hash::{self, Hashes, cluster_roots, cross_pairs, cross_pairs_phash};

/// One distinct image (by sha256, else path) and the questions that show it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImageEntry {
    pub path: Option<String>,
    pub sha256: Option<String>,
    pub phash: String,
    /// The questions showing it, in input order.
    pub ids: Vec<String>,
}

/// A benchmark image near a training image or a listed hash.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImageMatch {
    pub image: ImageEntry,
    /// The training image, or `None` for a listed hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train: Option<ImageEntry>,
    /// The listed hash and its line in the list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed: Option<(String, usize)>,
    pub distance: u32,
}

/// What the image side of `blindspot dups` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageDups {
    pub threshold: u32,
    /// Distinct images of the benchmark, and how many have a hash.
    pub images: usize,
    pub hashed: usize,
    /// Clusters (≥ 2 distinct images), each sorted by path; clusters by their first image.
    pub clusters: Vec<Vec<ImageEntry>>,
    pub train: Option<(usize, Vec<ImageMatch>)>,
    pub listed: Option<(String, usize, Vec<ImageMatch>)>,
}

/// A published list of hashes: one 16-hex-digit `phash` a line (blank lines
/// and lines starting with `#` skipped), with its line numbers.
pub struct HashList {
    pub name: String,
    pub hashes: Vec<u64>,
    pub lines: Vec<usize>,
}

impl HashList {
    /// Reads a list; a line that is not a hash is an error naming the file and line.
    pub fn read(path: &Path) -> Result<HashList> {
        let text = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = String::from_utf8(text).map_err(|e| {
            Error::one(
                Problem::new(
                    Location::file(path),
                    format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
                )
                .help("give a text file with one 16-hex-digit phash a line"),
            )
        })?;
        let (mut hashes, mut lines, mut problems) = (Vec::new(), Vec::new(), Vec::new());
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            match image_hash::from_hex(t) {
                Some(h) => {
                    hashes.push(h);
                    lines.push(n + 1);
                }
                None if problems.len() < 20 => problems.push(
                    Problem::new(
                        Location::line(path, n as u64 + 1),
                        format!("\"{}\" is not a perceptual hash", t.chars().take(40).collect::<String>()),
                    )
                    .help(
                        "write one phash a line as 16 hex digits (the `phash` of a release's `image_facts`, e.g. \
                         c3d1a0f08e1c2b3d); lines starting with # are comments",
                    ),
                ),
                None => {}
            }
        }
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        if hashes.is_empty() {
            return Err(Error::one(
                Problem::new(Location::file(path), "holds no hash").help("one 16-hex-digit phash a line"),
            ));
        }
        Ok(HashList { name: display_path(path), hashes, lines })
    }
}

/// The distinct hashed images of `samples` (every image, not only the first),
/// sorted by hashes then path, and how many distinct images there are.
fn entries(samples: &[Sample]) -> (Vec<(Hashes, ImageEntry)>, usize) {
    let mut by_key: BTreeMap<String, (Option<Hashes>, ImageEntry)> = BTreeMap::new();
    for s in samples {
        for im in &s.images {
            let Some(key) = im.sha256.clone().or_else(|| im.path.clone()) else { continue };
            let e = by_key.entry(key).or_insert_with(|| {
                let h = Hashes::read(im.phash.as_deref(), im.dhash.as_deref());
                (
                    h,
                    ImageEntry {
                        path: im.path.clone(),
                        sha256: im.sha256.clone(),
                        phash: im.phash.clone().unwrap_or_default(),
                        ids: Vec::new(),
                    },
                )
            });
            if e.1.ids.last() != Some(&s.id) {
                e.1.ids.push(s.id.clone());
            }
        }
    }
    let n = by_key.len();
    let mut out: Vec<(Hashes, ImageEntry)> = by_key.into_values().filter_map(|(h, e)| h.map(|h| (h, e))).collect();
    out.sort_by(|a, b| (a.0, &a.1.path, &a.1.sha256).cmp(&(b.0, &b.1.path, &b.1.sha256)));
    (out, n)
}

/// Clusters the images of `test` at `threshold` and matches them against
/// `train`'s images and a list of hashes.
pub fn find(test: &[Sample], train: Option<&[Sample]>, listed: Option<&HashList>, threshold: u32) -> ImageDups {
    let (mine, images) = entries(test);
    let hashes: Vec<Hashes> = mine.iter().map(|e| e.0).collect();
    let roots = cluster_roots(&hashes, threshold);
    let mut groups: BTreeMap<usize, Vec<ImageEntry>> = BTreeMap::new();
    for (&r, (_, entry)) in roots.iter().zip(&mine) {
        groups.entry(r).or_default().push(entry.clone());
    }
    let mut clusters: Vec<Vec<ImageEntry>> = groups.into_values().filter(|g| g.len() > 1).collect();
    for c in &mut clusters {
        c.sort_by(|a, b| (&a.path, &a.sha256).cmp(&(&b.path, &b.sha256)));
    }
    clusters.sort_by(|a, b| (&a[0].path, &a[0].sha256).cmp(&(&b[0].path, &b[0].sha256)));
    let train = train.map(|tr| {
        let (theirs, n) = entries(tr);
        let th: Vec<Hashes> = theirs.iter().map(|e| e.0).collect();
        let matches = cross_pairs(&hashes, &th, threshold)
            .into_iter()
            .map(|(a, b, d)| ImageMatch {
                image: mine[a].1.clone(),
                train: Some(theirs[b].1.clone()),
                listed: None,
                distance: d,
            })
            .collect();
        (n, matches)
    });
    let listed = listed.map(|l| {
        let matches = cross_pairs_phash(&hashes, &l.hashes, threshold)
            .into_iter()
            .map(|(a, b, d)| ImageMatch {
                image: mine[a].1.clone(),
                train: None,
                listed: Some((image_hash::to_hex(l.hashes[b]), l.lines[b])),
                distance: d,
            })
            .collect();
        (l.name.clone(), l.hashes.len(), matches)
    });
    ImageDups { threshold, images, hashed: hashes.len(), clusters, train, listed }
}

impl ImageDups {
    /// Every match of a benchmark image: to a training image, then to a listed hash.
    pub fn matches(&self) -> impl Iterator<Item = &ImageMatch> {
        self.train.iter().flat_map(|(_, m)| m).chain(self.listed.iter().flat_map(|(_, _, m)| m))
    }

    /// Distinct benchmark images with at least one match.
    pub fn matched(matches: &[ImageMatch]) -> usize {
        matches.iter().map(|m| (&m.image.sha256, &m.image.path)).collect::<std::collections::BTreeSet<_>>().len()
    }

    /// The `images` part of `dups.json`.
    pub fn file(&self) -> ImageDupsFile {
        ImageDupsFile {
            hash: "phash (DCT of the 16 x 16 grayscale, 8 x 8 low frequencies thresholded at their median) and dhash \
                   (differences of neighbouring pixels of the 9 x 8 grayscale), 64 bits each (image_hasher); a pair is \
                   near when both hashes are within the threshold, a cluster when every two of its images are (a \
                   listed hash is matched on phash alone); a flat phash (fewer than 8 bits set or cleared: a solid or \
                   blank image) is near nothing"
                .into(),
            threshold_bits: self.threshold,
            images: self.images,
            hashed: self.hashed,
            clusters: self.clusters.len(),
            images_in_clusters: self.clusters.iter().map(Vec::len).sum(),
            members: self.clusters.clone(),
            train: self.train.as_ref().map(|(n, m)| ImageTrain {
                images: *n,
                pairs: m.len(),
                images_with_match: Self::matched(m),
                matches: m.clone(),
            }),
            hashes: self.listed.as_ref().map(|(name, n, m)| ImageHashes {
                file: name.clone(),
                hashes: *n,
                pairs: m.len(),
                images_with_match: Self::matched(m),
                matches: m.clone(),
            }),
        }
    }
}

/// Near-duplicate images in `dups.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImageDupsFile {
    /// How images are hashed.
    pub hash: String,
    /// Images whose hashes are both within this many bits (of 64) are near.
    pub threshold_bits: u32,
    /// Distinct images of the benchmark.
    pub images: usize,
    pub hashed: usize,
    pub clusters: usize,
    pub images_in_clusters: usize,
    pub members: Vec<Vec<ImageEntry>>,
    /// Null without a training split.
    pub train: Option<ImageTrain>,
    /// Null without a list of published hashes.
    pub hashes: Option<ImageHashes>,
}

/// Benchmark images near a training image.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImageTrain {
    pub images: usize,
    pub pairs: usize,
    pub images_with_match: usize,
    pub matches: Vec<ImageMatch>,
}

/// Benchmark images near a listed hash.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ImageHashes {
    pub file: String,
    pub hashes: usize,
    pub pairs: usize,
    pub images_with_match: usize,
    pub matches: Vec<ImageMatch>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::ImageRef;

    /// A question on one image whose `phash` and `dhash` are both `hash`.
    fn sample(id: &str, path: &str, hash: Option<u64>) -> Sample {
        let mut s = Sample::new(id, "q", "a");
        s.images.push(ImageRef {
            path: Some(path.into()),
            sha256: Some(format!("sha-{path}")),
            phash: hash.map(image_hash::to_hex),
            dhash: hash.map(image_hash::to_hex),
            ..Default::default()
        });
        s
    }

    const BASE: u64 = 0x5a5a_5a5a_5a5a_5a5a;

    #[test]
    fn near_images_cluster_and_match_a_training_split_and_a_list() {
        let test = [
            sample("1", "a.png", Some(BASE)),
            sample("2", "b.png", Some(BASE ^ 3)),
            sample("3", "a.png", Some(BASE)),
            sample("4", "c.png", Some(!BASE)),
            sample("5", "d.png", None),
        ];
        let train = [sample("t1", "x.png", Some(!BASE ^ 0xf))];
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("hashes.txt");
        std::fs::write(&list, format!("# published\n\n{:016X}\n", BASE ^ 0xf0)).unwrap();
        let l = HashList::read(&list).unwrap();
        let d = find(&test, Some(&train), Some(&l), 4);
        assert_eq!((d.images, d.hashed), (4, 3));
        assert_eq!(d.clusters.len(), 1);
        assert_eq!(d.clusters[0].iter().map(|e| e.ids.clone()).collect::<Vec<_>>(), [vec!["1", "3"], vec!["2"]]);
        let (n, m) = d.train.as_ref().unwrap();
        assert_eq!((*n, m.len(), m[0].image.ids.clone(), m[0].distance), (1, 1, vec!["4".to_string()], 4));
        let (_, k, m) = d.listed.as_ref().unwrap();
        assert_eq!((*k, m.len()), (1, 1));
        assert_eq!(m[0].listed, Some((image_hash::to_hex(BASE ^ 0xf0), 3)));
        assert_eq!(m[0].image.path.as_deref(), Some("a.png"));
    }

    /// Seven images, each 3 bits from the next (18 from the first to the last):
    /// a cluster is a set every two of which are within 6 bits, so no cluster
    /// holds images more than 6 bits apart, and the chain falls into pieces.
    #[test]
    fn a_chain_of_near_images_is_not_one_cluster() {
        let chain: Vec<Sample> = (0..7)
            .map(|i| sample(&format!("{i}"), &format!("{i}.png"), Some(BASE ^ ((1u64 << (3 * i)) - 1))))
            .collect();
        let d = find(&chain, None, None, DEFAULT_THRESHOLD);
        let hash = |e: &ImageEntry| image_hash::from_hex(&e.phash).unwrap();
        for c in &d.clusters {
            for a in c {
                for b in c {
                    let gap = image_hash::distance(hash(a), hash(b));
                    assert!(
                        gap <= DEFAULT_THRESHOLD,
                        "{} and {} are {gap} bits apart in one cluster",
                        a.ids[0],
                        b.ids[0]
                    );
                }
            }
        }
        // Any four images of the chain span 9 bits or more: clusters of at most
        // three, and at least two of them.
        let sizes: Vec<usize> = d.clusters.iter().map(Vec::len).collect();
        assert!(sizes.len() >= 2 && sizes.iter().all(|&n| n <= 3), "{sizes:?}");
    }

    /// Solid images all hash alike; they are near nothing, copies of one
    /// another included.
    #[test]
    fn flat_images_never_cluster() {
        let solid: Vec<Sample> =
            (0..40).map(|i| sample(&format!("{i}"), &format!("{i}.png"), Some(u64::MAX))).collect();
        let d = find(&solid, None, None, DEFAULT_THRESHOLD);
        assert_eq!((d.images, d.hashed, d.clusters.len()), (40, 40, 0));
    }

    const DEFAULT_THRESHOLD: u32 = image_hash::DEFAULT_THRESHOLD;

    #[test]
    fn a_bad_line_in_a_hash_list_is_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("hashes.txt");
        std::fs::write(&list, "00000000000000f0\nnot-a-hash\n").unwrap();
        let e = HashList::read(&list).err().unwrap().to_string();
        assert!(e.contains("hashes.txt:2") && e.contains("\"not-a-hash\" is not a perceptual hash"), "{e}");
    }
}
