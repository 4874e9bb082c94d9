//! lmms-eval: a task folder to pass to `--include_path`.
//!
//! ```text
//! OUT/
//!   blindspot_<name>.yaml            group of every task below but a release's
//!                                    reference configs (full, removed, duplicates)
//!   blindspot_<name>_<config>.yaml   one task per config
//!   data/<config>.parquet            the rows (canonical schema, images embedded;
//!                                    `circular` adds the `rotation` column)
//!   videos/<path>                    each video file the rows name (`doc_to_visual`
//!                                    hands its path over, as lmms-eval's video tasks do)
//!   utils.py                         doc_to_visual/text/target, process_results, aggregate
//!   manifest.json                    doc_id → blindspot id, per task
//! ```
//!
//! Each task sends the row's `prompt` with its `images` and scores the reply
//! with `utils.score` (blindspot's own answer-reading rules, written in by
//! the export); `process_results` echoes blindspot's id, variant and
//! expected behaviour with the prediction.
//!
//! Nothing in the folder names where it was written: `data_files` are
//! relative (`data/<config>.parquet`), which lmms-eval (0.7.3 and later)
//! resolves against the task file's folder for the `parquet` builder, so the
//! folder can be moved and run from any working directory. (Earlier
//! lmms-eval versions hand them to `datasets` unchanged, which resolves them
//! against the working directory: run those from the folder.)

use std::path::Path;

use super::file_safe;
use crate::error::{Error, Result};
use crate::io::escape::yaml;
use crate::io::fs::write_bytes;
use crate::io::fs::write_json;
use crate::io::parquet::write_samples_with;
use crate::io::release_dir::Config;
use crate::predictions::export_manifest::{DocRow, ExportManifest, Task};
use crate::sample::Embed;

/// The `utils.py` every task YAML refers to, before [`utils_py`] fills in the rules.
pub const UTILS_PY: &str = include_str!("lmms_eval_utils.py");

/// `utils.py` with blindspot's answer-reading rules written in.
pub fn utils_py() -> String {
    let rules = serde_json::to_string_pretty(&crate::predictions::parse::rules_json()).unwrap_or_default();
    UTILS_PY.replace("__BLINDSPOT_RULES__", &rules)
}

/// A task name lmms-eval accepts: lowercase `[a-z0-9_]`.
pub fn task_name(name: &str, config: &str) -> String {
    let raw = format!("blindspot_{name}_{config}");
    raw.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// A YAML double-quoted scalar on one line.
fn q(s: &str) -> String {
    yaml::quoted(s)
}

fn max_new_tokens(c: &Config) -> u32 {
    let kind = c.rows.first().and_then(|r| r.variant.as_deref()).unwrap_or("");
    if kind == "guess" {
        512
    } else if c.rows.iter().any(|r| r.expected.as_deref() == Some("abstain")) {
        256
    } else {
        32
    }
}

fn task_yaml(task: &str, c: &Config, data: &str) -> String {
    // The CircularEval config holds every rotation: it is named by the family.
    let variant = match super::has_rotations(c) {
        true => crate::variants::CIRCULAR_CONFIG.to_string(),
        false => c.rows.first().and_then(|r| r.variant.clone()).unwrap_or_else(|| c.name.clone()),
    };
    format!(
        "# Written by `blindspot export --to lmms-eval`; export again instead of editing.\n\
         task: {task}\n\
         dataset_path: parquet\n\
         dataset_kwargs:\n\
         \x20 data_files:\n\
         \x20   test: {data}\n\
         test_split: test\n\
         output_type: generate_until\n\
         doc_to_visual: !function utils.doc_to_visual\n\
         doc_to_text: !function utils.doc_to_text\n\
         doc_to_target: !function utils.doc_to_target\n\
         generation_kwargs:\n\
         \x20 max_new_tokens: {tokens}\n\
         \x20 temperature: 0\n\
         \x20 do_sample: false\n\
         process_results: !function utils.process_results\n\
         metric_list:\n\
         \x20 - metric: blindspot\n\
         \x20   aggregation: !function utils.aggregate\n\
         \x20   higher_is_better: true\n\
         metadata:\n\
         \x20 version: 1.0\n\
         \x20 blindspot_config: {config}\n\
         \x20 blindspot_variant: {variant}\n",
        task = q(task),
        data = q(data),
        tokens = max_new_tokens(c),
        config = q(&c.name),
        variant = q(&variant),
    )
}

/// Writes each video file of `r` under `out/videos/` (once) and keeps its
/// path only: a harness's video model opens a file, not bytes in a table.
fn write_videos(mut r: crate::sample::Sample, out: &Path) -> Result<crate::sample::Sample> {
    for v in &mut r.videos {
        let (Some(path), Some(bytes)) = (&v.path, v.bytes.take()) else { continue };
        let leaves = Path::new(path).components().any(|c| !matches!(c, std::path::Component::Normal(_)));
        if leaves {
            return Err(Error::Bug(format!("row \"{}\": video path {path:?} leaves the export folder", r.id)));
        }
        let to = out.join("videos").join(path);
        if !to.exists() {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            write_bytes(&to, &bytes)?;
        }
    }
    Ok(r)
}

/// Writes the task folder into `out` (an existing, empty folder).
pub fn export(configs: &[Config], name: &str, out: &Path) -> Result<ExportManifest> {
    let data_dir = out.join("data");
    std::fs::create_dir_all(&data_dir).map_err(|e| Error::io(&data_dir, e))?;
    let mut tasks = Vec::new();
    // The group's tasks: a release's reference configs are exported as tasks
    // of their own, run only when named.
    let mut names = Vec::new();
    for c in configs.iter().filter(|c| !c.rows.is_empty()) {
        let task = task_name(name, &c.name);
        let data_file = format!("data/{}.parquet", file_safe(&c.name));
        // Every doc carries the text to send (a release's questions have no
        // `prompt` of their own) and its image bytes (the folder is self-contained).
        let rows: Vec<crate::sample::Sample> = c
            .rows
            .iter()
            .map(|r| {
                let mut r = r.clone();
                if r.prompt.is_none() {
                    r.prompt = Some(crate::variants::render_prompt(&r));
                }
                r
            })
            .map(|r| write_videos(r, out))
            .collect::<Result<_>>()?;
        write_samples_with(&out.join(&data_file), &rows, Embed::Images, super::extra_columns(c))?;
        let yaml_file = format!("{task}.yaml");
        write_bytes(&out.join(&yaml_file), task_yaml(&task, c, &data_file).as_bytes())?;
        let rows = c.rows.iter().enumerate().map(|(doc_id, r)| DocRow { doc_id, id: r.id.clone() }).collect();
        if !c.is_reference() {
            names.push(task.clone());
        }
        tasks.push(Task { task, config: c.name.clone(), yaml: yaml_file, data: data_file, rows });
    }
    let group = task_name(name, "").trim_end_matches('_').to_string();
    let mut group_yaml = format!(
        "# Written by `blindspot export --to lmms-eval`: every blindspot task of {}.\ngroup: {}\ntask:\n",
        yaml::comment(name),
        q(&group)
    );
    for n in &names {
        group_yaml.push_str(&format!("  - {}\n", q(n)));
    }
    write_bytes(&out.join(format!("{group}.yaml")), group_yaml.as_bytes())?;
    write_bytes(&out.join("utils.py"), utils_py().as_bytes())?;
    let manifest = ExportManifest::LmmsEval { name: name.to_string(), group, tasks };
    write_json(&out.join("manifest.json"), &manifest)?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Sample;

    /// A release's reference configs are tasks of their own, outside the group:
    /// running the group scores the kept questions once.
    #[test]
    fn the_group_leaves_out_a_releases_reference_configs() {
        let tmp = tempfile::tempdir().unwrap();
        let config = |name: &str| Config {
            name: name.into(),
            files: Vec::new(),
            rows: vec![Sample::new(format!("{name}-1"), "Is there a fracture?", "yes")],
        };
        let configs: Vec<Config> = ["data", "duplicates", "full", "no_image", "removed"].map(config).into();
        let manifest = export(&configs, "demo", tmp.path()).unwrap();
        let ExportManifest::LmmsEval { tasks, .. } = manifest else { panic!("an lmms-eval manifest") };
        assert_eq!(tasks.len(), 5);
        let group = std::fs::read_to_string(tmp.path().join("blindspot_demo.yaml")).unwrap();
        let tasks: Vec<&str> = group.lines().filter_map(|l| l.strip_prefix("  - ")).collect();
        assert_eq!(tasks, ["\"blindspot_demo_data\"", "\"blindspot_demo_no_image\""]);
        assert!(tmp.path().join("blindspot_demo_full.yaml").is_file());
    }
}
