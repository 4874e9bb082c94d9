//! Near-duplicate images: the images of a benchmark clustered by perceptual
//! hash (`phash`, [`crate::sample::image_hash`]), and the benchmark's images
//! matched against a training split's or against a published list of hashes.
//! The image side of `blindspot dups`; questions are compared in [`super::dups`].

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Location, Problem, Result, display_path};
use crate::sample::Sample;
use crate::sample::image_hash::{self, cross_pairs, near_pairs};

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
/// sorted by phash then path, and how many distinct images there are.
fn entries(samples: &[Sample]) -> (Vec<(u64, ImageEntry)>, usize) {
    let mut by_key: BTreeMap<String, (Option<u64>, ImageEntry)> = BTreeMap::new();
    for s in samples {
        for im in &s.images {
            let Some(key) = im.sha256.clone().or_else(|| im.path.clone()) else { continue };
            let e = by_key.entry(key).or_insert_with(|| {
                let h = im.phash.as_deref().and_then(image_hash::from_hex);
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
    let mut out: Vec<(u64, ImageEntry)> = by_key.into_values().filter_map(|(h, e)| h.map(|h| (h, e))).collect();
    out.sort_by(|a, b| (a.0, &a.1.path, &a.1.sha256).cmp(&(b.0, &b.1.path, &b.1.sha256)));
    (out, n)
}

/// Clusters the images of `test` at `threshold` and matches them against
/// `train`'s images and a list of hashes.
pub fn find(test: &[Sample], train: Option<&[Sample]>, listed: Option<&HashList>, threshold: u32) -> ImageDups {
    let (mine, images) = entries(test);
    let hashes: Vec<u64> = mine.iter().map(|e| e.0).collect();
    let mut parent: Vec<usize> = (0..hashes.len()).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for (a, b, _) in near_pairs(&hashes, threshold) {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra.max(rb)] = ra.min(rb);
    }
    let mut groups: BTreeMap<usize, Vec<ImageEntry>> = BTreeMap::new();
    for (i, (_, entry)) in mine.iter().enumerate() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(entry.clone());
    }
    let mut clusters: Vec<Vec<ImageEntry>> = groups.into_values().filter(|g| g.len() > 1).collect();
    for c in &mut clusters {
        c.sort_by(|a, b| (&a.path, &a.sha256).cmp(&(&b.path, &b.sha256)));
    }
    clusters.sort_by(|a, b| (&a[0].path, &a[0].sha256).cmp(&(&b[0].path, &b[0].sha256)));
    let train = train.map(|tr| {
        let (theirs, n) = entries(tr);
        let th: Vec<u64> = theirs.iter().map(|e| e.0).collect();
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
        let matches = cross_pairs(&hashes, &l.hashes, threshold)
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
            hash: "phash: DCT of the 16 x 16 grayscale, 8 x 8 low frequencies thresholded at their median (image_hasher), 64 bits".into(),
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
    /// Hashes within this many bits (of 64) are near.
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

    fn sample(id: &str, path: &str, phash: Option<&str>) -> Sample {
        let mut s = Sample::new(id, "q", "a");
        s.images.push(ImageRef {
            path: Some(path.into()),
            sha256: Some(format!("sha-{path}")),
            phash: phash.map(str::to_string),
            ..Default::default()
        });
        s
    }

    #[test]
    fn near_images_cluster_and_match_a_training_split_and_a_list() {
        let test = [
            sample("1", "a.png", Some("0000000000000000")),
            sample("2", "b.png", Some("0000000000000003")),
            sample("3", "a.png", Some("0000000000000000")),
            sample("4", "c.png", Some("ffffffffffffffff")),
            sample("5", "d.png", None),
        ];
        let train = [sample("t1", "x.png", Some("fffffffffffffff0"))];
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("hashes.txt");
        std::fs::write(&list, "# published\n\n00000000000000F0\n").unwrap();
        let l = HashList::read(&list).unwrap();
        let d = find(&test, Some(&train), Some(&l), 4);
        assert_eq!((d.images, d.hashed), (4, 3));
        assert_eq!(d.clusters.len(), 1);
        assert_eq!(d.clusters[0].iter().map(|e| e.ids.clone()).collect::<Vec<_>>(), [vec!["1", "3"], vec!["2"]]);
        let (n, m) = d.train.as_ref().unwrap();
        assert_eq!((*n, m.len(), m[0].image.ids.clone(), m[0].distance), (1, 1, vec!["4".to_string()], 4));
        let (_, k, m) = d.listed.as_ref().unwrap();
        assert_eq!((*k, m.len()), (1, 1));
        assert_eq!(m[0].listed, Some(("00000000000000f0".to_string(), 3)));
        assert_eq!(m[0].image.path.as_deref(), Some("a.png"));
    }

    #[test]
    fn a_bad_line_in_a_hash_list_is_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("hashes.txt");
        std::fs::write(&list, "00000000000000f0\nnot-a-hash\n").unwrap();
        let e = HashList::read(&list).err().unwrap().to_string();
        assert!(e.contains("hashes.txt:2") && e.contains("\"not-a-hash\" is not a perceptual hash"), "{e}");
    }
}
