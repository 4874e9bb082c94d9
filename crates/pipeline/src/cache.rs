//! Stage cache: the results of the expensive stages (diagnose, prune) kept
//! under `.blindspot/cache/<stage>/<key>.json`, so rebuilding an unchanged
//! pipeline skips them.
//!
//! The key is the sha256 of the code's fingerprint (the run context), the
//! stage name, the stage's input (the sha256 of the canonical samples, serialized) and its
//! settings (their canonical JSON, every field by name), so any change to data, configuration or blindspot's code misses.
//! A cached value is JSON with exact float round-trips: a build from the
//! cache writes the same bytes as one without. Each entry starts with the
//! sha256 of its own JSON: an entry edited or damaged since it was written is
//! a miss (with a warning) and is recomputed. That hash catches accidents, not
//! forgery (whoever edits an entry can recompute it): a cached value is also
//! checked against the data it is used with (a pruning run must partition
//! exactly the questions it is given), and the release prints every count from
//! the data it writes, never from a cached value. An unreadable or stale entry is
//! a miss, never an error; a failed write only costs the next build its
//! speed-up. Only the pipeline runner uses it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

/// Where the cache lives: `BLINDSPOT_CACHE_DIR`, else `.blindspot/cache`
/// in the current folder.
pub fn default_dir() -> PathBuf {
    std::env::var_os("BLINDSPOT_CACHE_DIR").map_or_else(|| PathBuf::from(".blindspot/cache"), PathBuf::from)
}

#[derive(Debug, Clone)]
pub struct StageCache {
    dir: Option<PathBuf>,
}

impl StageCache {
    pub fn new(dir: impl Into<PathBuf>) -> StageCache {
        StageCache { dir: Some(dir.into()) }
    }

    /// A cache that never hits and never writes.
    pub fn disabled() -> StageCache {
        StageCache { dir: None }
    }

    /// The key of a stage run: the code's fingerprint, stage and every input part.
    pub fn key(ctx: &crate::context::RunContext, stage: &str, parts: &[&[u8]]) -> String {
        let mut h = Sha256::new();
        for p in [ctx.code.as_bytes(), stage.as_bytes()].iter().chain(parts) {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        hex::encode(h.finalize())
    }

    fn path(&self, stage: &str, key: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(stage).join(format!("{key}.json")))
    }

    /// The cached value, if present, readable, matching its own hash and
    /// agreeing with the stage's input (`check` says why a value does not: an
    /// entry forged with its hash recomputed is a miss too, and is recomputed).
    pub fn get_checked<T: DeserializeOwned>(
        &self,
        stage: &str,
        key: &str,
        check: impl FnOnce(&T) -> std::result::Result<(), String>,
    ) -> Option<T> {
        let value = self.get(stage, key)?;
        match check(&value) {
            Ok(()) => Some(value),
            Err(why) => {
                eprintln!(
                    "warning: stage cache: {} does not agree with the data it was stored for ({why}): recomputing {stage}",
                    self.path(stage, key).map_or_else(String::new, |p| p.display().to_string())
                );
                None
            }
        }
    }

    /// The cached value, if present, readable and matching its own hash.
    pub fn get<T: DeserializeOwned>(&self, stage: &str, key: &str) -> Option<T> {
        let path = self.path(stage, key)?;
        let bytes = std::fs::read(&path).ok()?;
        let newline = bytes.iter().position(|b| *b == b'\n')?;
        let (sum, json) = (&bytes[..newline], &bytes[newline + 1..]);
        if sum != hex::encode(Sha256::digest(json)).as_bytes() {
            eprintln!(
                "warning: stage cache: {} does not match its recorded hash (edited or damaged): recomputing {stage}",
                path.display()
            );
            return None;
        }
        serde_json::from_slice(json).ok()
    }

    /// Stores a value (temporary file, then rename). Failures are warnings.
    pub fn put<T: Serialize>(&self, stage: &str, key: &str, value: &T) {
        let Some(path) = self.path(stage, key) else { return };
        if let Err(e) = write_atomic(&path, value) {
            eprintln!("warning: stage cache: cannot write {}: {e} (the next build recomputes {stage})", path.display());
        }
    }

    /// `get`, else compute and `put`.
    pub fn get_or<T: Serialize + DeserializeOwned>(&self, stage: &str, key: &str, compute: impl FnOnce() -> T) -> T {
        if let Some(v) = self.get(stage, key) {
            return v;
        }
        let v = compute();
        self.put(stage, key, &v);
        v
    }

    /// [`StageCache::get_or`] for a computation that can fail (nothing is stored
    /// then), whose cached value must pass `check` (see [`StageCache::get_checked`]).
    pub fn try_get_or<T: Serialize + DeserializeOwned>(
        &self,
        stage: &str,
        key: &str,
        check: impl FnOnce(&T) -> std::result::Result<(), String>,
        compute: impl FnOnce() -> crate::error::Result<T>,
    ) -> crate::error::Result<T> {
        if let Some(v) = self.get_checked(stage, key, check) {
            return Ok(v);
        }
        let v = compute()?;
        self.put(stage, key, &v);
        Ok(v)
    }

    /// Whether this cache reads and writes anything.
    pub fn enabled(&self) -> bool {
        self.dir.is_some()
    }
}

fn write_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    let json = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut tmp, format!("{}\n", hex::encode(Sha256::digest(&json))).as_bytes())?;
    std::io::Write::write_all(&mut tmp, &json)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The canonical JSON of a stage's settings, for cache keys.
pub fn config_bytes<T: Serialize>(config: &T) -> crate::error::Result<Vec<u8>> {
    serde_json::to_vec(config).map_err(|e| crate::error::Error::Bug(format!("stage settings as JSON: {e}")))
}

/// The sha256 of a sample set's canonical JSON, for cache keys: the JSON is
/// hashed as it is written, never held (it is as large as the benchmark).
pub fn samples_digest(samples: &[crate::sample::Sample]) -> crate::error::Result<[u8; 32]> {
    struct HashWriter(Sha256);
    impl std::io::Write for HashWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = std::io::BufWriter::with_capacity(1 << 16, HashWriter(Sha256::new()));
    serde_json::to_writer(&mut w, samples).map_err(|e| crate::error::Error::Bug(format!("samples as JSON: {e}")))?;
    let w = w.into_inner().map_err(|e| crate::error::Error::Bug(format!("samples as JSON: {e}")))?;
    Ok(w.0.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_any_setting_changes_the_key() {
        let base = crate::diagnose::DiagnoseConfig::default();
        let key = |cfg: &crate::diagnose::DiagnoseConfig| config_bytes(cfg).unwrap();
        let mut slots = base.clone();
        slots.features.max_slots += 1;
        let mut numeric = base.clone();
        numeric.numeric = crate::sample::NumericScoring::Tolerance(0.05);
        let mut tolerance = base.clone();
        tolerance.numeric = crate::sample::NumericScoring::Tolerance(0.0500001);
        let mut grouped = base.clone();
        grouped.group_by = Some(crate::diagnose::GroupBy::Meta("organ".into()));
        let keys = [key(&base), key(&slots), key(&numeric), key(&tolerance), key(&grouped)];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(key(&base), key(&base.clone()), "the same settings, the same key");
    }

    #[test]
    fn roundtrips_and_misses_on_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let c = StageCache::new(dir.path());
        let ctx = crate::context::RunContext::default();
        let key = |parts: &[&[u8]]| StageCache::key(&ctx, "s", parts);
        let k = key(&[b"a"]);
        assert_ne!(k, key(&[b"b"]));
        assert_ne!(key(&[b"ab"]), key(&[b"a", b"b"]));
        let other_code = crate::context::RunContext { code: "another build", ..ctx.clone() };
        assert_ne!(k, StageCache::key(&other_code, "s", &[b"a"]), "a code change misses");
        let v = vec![0.1f64 + 0.2, 1.0 / 3.0, 2.0f64.sqrt()];
        c.put("s", &k, &v);
        let back: Vec<f64> = c.get("s", &k).unwrap();
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert!(c.get::<Vec<f64>>("s", &key(&[b"b"])).is_none());
        let file = dir.path().join("s").join(format!("{k}.json"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("0.3", "0.4")).unwrap();
        assert!(c.get::<Vec<f64>>("s", &k).is_none(), "an edited entry is a miss");
        std::fs::write(&file, "{broken").unwrap();
        assert!(c.get::<Vec<f64>>("s", &k).is_none(), "a corrupt entry is a miss");
        assert!(StageCache::disabled().get::<Vec<f64>>("s", &k).is_none());
        // A value that disagrees with its input is a miss, and is recomputed.
        c.put("s", &k, &vec![1.0f64]);
        assert_eq!(
            c.get_checked::<Vec<f64>>("s", &k, |v| if v.len() == 1 { Ok(()) } else { Err("".into()) }),
            Some(vec![1.0])
        );
        assert!(c.get_checked::<Vec<f64>>("s", &k, |_| Err("forged".into())).is_none());
        let v = c.try_get_or("s", &k, |_: &Vec<f64>| Err("forged".into()), || Ok(vec![2.0])).unwrap();
        assert_eq!(v, vec![2.0]);
    }
}
