//! A synthetic, templated chest-X-ray-style multiple-choice benchmark with
//! *planted* shortcuts at known rates: the scale test set (ReXVQA has ~700,000
//! questions) and the ground truth diagnose is checked against.
//!
//! Five skills, one per question type, 4 options each, in rotation
//! (item `i` has skill `i mod 5`):
//!
//! | skill | shortcut | planted items |
//! |---|---|---|
//! | `presence` | answer position: the gold is option B | `rate` of the skill |
//! | `location` | object → answer prior: the gold is the finding's typical location | `rate` |
//! | `differential` | option length: the gold carries a long qualifier | `rate` |
//! | `negation`, `geometry` | none: gold position and text independent of everything visible | 0 |
//!
//! Items of a shortcut skill without the plant are drawn so the shortcut is
//! imperfect (a typical location offered as a distractor, a qualifier on a
//! random option), as in real benchmarks.
//!
//! Output folder: `questions.jsonl` (id, skill, question, options, answer
//! index), `truth.csv` (id, skill, shortcut, planted), `synth.toml` (a pipeline
//! that ingests, diagnoses, prunes and releases it) and `synth.json` (counts).
//! Rows are generated and written one at a time from one ChaCha stream seeded
//! from `(seed, "synth", "questions")`: the same N and seed give the same bytes,
//! in constant memory.

use std::io::Write;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{Error, Result};

/// The skills, in rotation order.
pub const SKILLS: [&str; 5] = ["presence", "location", "negation", "differential", "geometry"];

/// The shortcut planted in a skill's items (`none` for the shortcut-free skills).
pub fn shortcut_of(skill: &str) -> &'static str {
    match skill {
        "presence" => "answer_position",
        "location" => "object_prior",
        "differential" => "option_length",
        _ => "none",
    }
}

/// Settings of one generated benchmark.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    pub questions: usize,
    pub seed: u64,
    /// Share of a shortcut skill's items that carry its shortcut.
    pub rate: f64,
}

/// What was written.
#[derive(Debug, Clone, Serialize)]
pub struct SynthSummary {
    pub questions: usize,
    pub seed: u64,
    pub rate: f64,
    /// Per skill: items, and how many carry the skill's shortcut.
    pub skills: Vec<SkillCount>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkillCount {
    pub skill: String,
    pub shortcut: String,
    pub items: usize,
    pub planted: usize,
}

const FINDINGS: &[(&str, &str)] = &[
    ("pneumothorax", "right apex"),
    ("pleural effusion", "left costophrenic angle"),
    ("lobar consolidation", "right lower lobe"),
    ("atelectasis", "left lower lobe"),
    ("pulmonary nodule", "right upper lobe"),
    ("spiculated mass", "left upper lobe"),
    ("hilar lymphadenopathy", "right hilum"),
    ("rib fracture", "left lateral chest wall"),
    ("cavitary lesion", "right upper lobe"),
    ("calcified granuloma", "left midlung zone"),
    ("pleural thickening", "right costophrenic angle"),
    ("mediastinal widening", "superior mediastinum"),
    ("pneumomediastinum", "superior mediastinum"),
    ("subcutaneous emphysema", "left supraclavicular region"),
    ("lobar collapse", "left upper lobe"),
    ("bronchiectasis", "right middle lobe"),
    ("miliary nodules", "both lungs diffusely"),
    ("aortic knob calcification", "aortic arch"),
    ("vertebral compression fracture", "thoracic spine"),
    ("elevated hemidiaphragm", "right hemidiaphragm"),
    ("kerley b lines", "right lung base"),
    ("air bronchograms", "lingula"),
    ("hiatal hernia", "retrocardiac region"),
    ("pneumoperitoneum", "right subdiaphragmatic space"),
    ("interstitial opacities", "both lung bases"),
    ("apical pleural cap", "left apex"),
];

const LOCATIONS: &[&str] = &[
    "right upper lobe",
    "right middle lobe",
    "right lower lobe",
    "left upper lobe",
    "lingula",
    "left lower lobe",
    "right apex",
    "left apex",
    "right costophrenic angle",
    "left costophrenic angle",
    "retrocardiac region",
    "right hilum",
    "left hilum",
    "superior mediastinum",
    "left lateral chest wall",
    "left midlung zone",
    "left supraclavicular region",
    "both lungs diffusely",
    "aortic arch",
    "thoracic spine",
    "right hemidiaphragm",
    "right lung base",
    "right subdiaphragmatic space",
    "both lung bases",
];

const VIEWS: &[&str] = &["PA", "AP", "portable AP", "supine AP", "lateral"];

const DEVICES: &[&str] = &[
    "an endotracheal tube",
    "a nasogastric tube",
    "a right internal jugular central venous catheter",
    "a left-sided PICC line",
    "a dual-chamber pacemaker",
    "a right-sided chest tube",
    "median sternotomy wires",
    "an implantable cardioverter-defibrillator",
];

const DIAGNOSES: &[&str] = &[
    "community-acquired pneumonia",
    "congestive heart failure",
    "primary lung adenocarcinoma",
    "sarcoidosis",
    "pulmonary tuberculosis",
    "pulmonary infarction",
    "emphysema",
    "idiopathic pulmonary fibrosis",
    "metastatic disease",
    "aspiration pneumonitis",
    "lymphoma",
    "acute respiratory distress syndrome",
    "lung abscess",
    "mesothelioma",
    "silicosis",
    "viral pneumonia",
];

const QUALIFIERS: &[&str] = &[
    "with superimposed bacterial infection in the dependent segments",
    "in the setting of long-standing immunosuppression",
    "complicated by a small parapneumonic effusion",
    "with associated mediastinal and hilar involvement",
    "given the distribution and the clinical course described",
    "with secondary volume loss and compensatory hyperinflation",
];

const SYMPTOMS: &[&str] = &[
    "fever and a productive cough",
    "progressive dyspnea",
    "pleuritic chest pain",
    "hemoptysis",
    "weight loss and night sweats",
    "acute shortness of breath",
    "a chronic dry cough",
    "orthopnea and leg swelling",
];

const MEASURES: &[(&str, f64, f64, &str)] = &[
    ("the cardiothoracic ratio", 0.38, 0.72, ""),
    ("the width of the superior mediastinum", 4.0, 11.0, " cm"),
    ("the distance from the endotracheal tube tip to the carina", 1.0, 8.0, " cm"),
    ("the diameter of the pulmonary nodule", 0.5, 3.5, " cm"),
    ("the depth of the pleural effusion", 1.0, 9.0, " cm"),
    ("the apical pneumothorax rim", 0.5, 4.5, " cm"),
];

/// One generated question.
#[derive(Serialize)]
struct Row<'a> {
    id: &'a str,
    skill: &'a str,
    question: &'a str,
    options: &'a [String],
    answer: usize,
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.random_range(0..xs.len())]
}

/// `k` distinct indices into `0..n`, in drawing order.
fn distinct(rng: &mut ChaCha8Rng, n: usize, k: usize, exclude: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(k);
    while out.len() < k {
        let i = rng.random_range(0..n);
        if !out.contains(&i) && !exclude.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Places `gold` at `position` among `others` (in their order).
fn arrange(gold: String, others: Vec<String>, position: usize) -> Vec<String> {
    let mut opts = others;
    opts.insert(position, gold);
    opts
}

/// One item of `skill`: question, options, gold index, whether the shortcut was planted.
fn item(rng: &mut ChaCha8Rng, skill: &str, rate: f64) -> (String, Vec<String>, usize, bool) {
    let planted = shortcut_of(skill) != "none" && rng.random_bool(rate);
    let view = *pick(rng, VIEWS);
    match skill {
        "presence" => {
            let loc = *pick(rng, LOCATIONS);
            let q = if rng.random_bool(0.3) {
                let device = *pick(rng, DEVICES);
                format!(
                    "On this {view} chest radiograph with {device} in place, which finding is present in the {loc}?"
                )
            } else {
                format!("On this {view} chest radiograph, which finding is present in the {loc}?")
            };
            let f = distinct(rng, FINDINGS.len(), 4, &[]);
            let pos = if planted { 1 } else { rng.random_range(0..4) };
            let texts: Vec<String> = f.iter().map(|&i| FINDINGS[i].0.to_string()).collect();
            let opts = arrange(texts[0].clone(), texts[1..].to_vec(), pos);
            (q, opts, pos, planted)
        }
        "location" => {
            let fi = rng.random_range(0..FINDINGS.len());
            let (finding, typical) = FINDINGS[fi];
            let t = LOCATIONS.iter().position(|l| *l == typical).expect("typical locations are locations");
            let q = format!("Where is the {finding} seen on this {view} radiograph?");
            let pos = rng.random_range(0..4);
            let (gold, others) = if planted {
                (t, distinct(rng, LOCATIONS.len(), 3, &[t]))
            } else {
                let gold = distinct(rng, LOCATIONS.len(), 1, &[t])[0];
                let mut others = distinct(rng, LOCATIONS.len(), 3, &[t, gold]);
                if rng.random_bool(0.5) {
                    let k = rng.random_range(0..3);
                    others[k] = t;
                }
                (gold, others)
            };
            let others = others.iter().map(|&i| LOCATIONS[i].to_string()).collect();
            (q, arrange(LOCATIONS[gold].to_string(), others, pos), pos, planted)
        }
        "negation" => {
            let loc = *pick(rng, LOCATIONS);
            let q = format!("Which of the following is NOT seen in the {loc} on this {view} radiograph?");
            let f = distinct(rng, FINDINGS.len(), 4, &[]);
            let pos = rng.random_range(0..4);
            let texts: Vec<String> = f.iter().map(|&i| FINDINGS[i].0.to_string()).collect();
            (q, arrange(texts[0].clone(), texts[1..].to_vec(), pos), pos, planted)
        }
        "differential" => {
            let age = rng.random_range(18..90);
            let symptom = *pick(rng, SYMPTOMS);
            let finding = pick(rng, FINDINGS).0;
            let q = format!(
                "A {age}-year-old patient presents with {symptom}. The {view} radiograph shows {finding}. What is the most likely diagnosis?"
            );
            let d = distinct(rng, DIAGNOSES.len(), 4, &[]);
            let pos = rng.random_range(0..4);
            let mut opts =
                arrange(DIAGNOSES[d[0]].to_string(), d[1..].iter().map(|&i| DIAGNOSES[i].to_string()).collect(), pos);
            let qualified = if planted {
                Some(pos)
            } else if rng.random_bool(0.3) {
                Some(rng.random_range(0..4))
            } else {
                None
            };
            if let Some(k) = qualified {
                let qualifier = *pick(rng, QUALIFIERS);
                opts[k] = format!("{} {qualifier}", opts[k]);
            }
            (q, opts, pos, planted)
        }
        "geometry" => {
            let &(measure, lo, hi, unit) = pick(rng, MEASURES);
            let q = format!("On this {view} radiograph, what is {measure}?");
            let step = if unit.is_empty() { 0.01 } else { 0.1 };
            let steps = ((hi - lo) / step).round() as usize;
            let mut vals = distinct(rng, steps + 1, 4, &[]);
            let gold = vals[0];
            vals.sort_unstable();
            let pos = vals.iter().position(|&v| v == gold).expect("the gold is among the values");
            let digits = if unit.is_empty() { 2 } else { 1 };
            let opts = vals.iter().map(|&v| format!("{:.*}{unit}", digits, lo + v as f64 * step)).collect();
            (q, opts, pos, planted)
        }
        _ => unreachable!("skills are fixed"),
    }
}

/// The pipeline file written beside the data: ingest, TsT-RF, IBP with a fractional
/// batch, image-free variants, release.
fn pipeline_text(cfg: &SynthConfig) -> String {
    format!(
        r#"# Written by `blindspot synth --questions {n} --seed {seed}`: a synthetic chest-X-ray-style
# benchmark with planted shortcuts (truth.csv says which items carry which).
[dataset]
name = "synth-cxr-{n}"
version = "1.0.0"
license = "CC0-1.0"
description = "Synthetic chest-X-ray-style multiple-choice questions ({n}, seed {seed}) with planted answer-position, object-prior and option-length shortcuts, generated by blindspot synth."
seed = {seed}
date-published = "2026-11-21"

[ingest]
path = "questions.jsonl"
format = "jsonl"
split = "test"

[ingest.fields]
id = "id"
question = "question"
options = "options"
answer = "answer"
answer-kind = "index"
question-type = "skill"

[diagnose]
folds = 5

[prune]
method = "ibp"
budget = "10%"
batch = "2%"
floor = 10

# No images, so no image-based kinds (mirage, no_image, ... need one): the option traps.
[variants]
kinds = ["option_shuffle", "unknown_option", "gold_removed"]

[release]
embed-images = false

[datasheet]
purpose = "A synthetic scale and recall test for blindspot: every shortcut is planted at a known rate."
collection = "Generated from templates and term lists by blindspot synth; no patient data."
creators = "blindspot synth (generated)."
funding = "None."
confidential = "No: every question is generated from public term lists."
offensive = "No."
people = "No: no person is described; ages and symptoms are drawn at random."
ethical-review = "Not applicable: no human data."
uses-so-far = "Scale benchmarks and recall tests of blindspot."
not-for = "Any clinical use or model evaluation: the questions have no images and their answers are random by design."
third-party-ip = "None."
maintainer = "The blindspot maintainers."
errata = "None."
contributions = "Regenerate with blindspot synth."
"#,
        n = cfg.questions,
        seed = cfg.seed
    )
}

/// Writes the benchmark into `dir` (created if missing): questions.jsonl, truth.csv,
/// synth.toml, synth.json.
pub fn write(cfg: &SynthConfig, dir: &Path) -> Result<SynthSummary> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let q_path = dir.join("questions.jsonl");
    let t_path = dir.join("truth.csv");
    let open = |p: &Path| -> Result<std::io::BufWriter<std::fs::File>> {
        let f = std::fs::File::create(p).map_err(|e| Error::io(p, e))?;
        Ok(std::io::BufWriter::with_capacity(1 << 20, f))
    };
    let mut qs = open(&q_path)?;
    let mut truth = open(&t_path)?;
    writeln!(truth, "id,skill,shortcut,planted").map_err(|e| Error::io(&t_path, e))?;
    let mut rng = ChaCha8Rng::seed_from_u64(crate::seed::rng_for(cfg.seed, "synth", "questions"));
    let width = cfg.questions.max(1).to_string().len();
    let mut counts: Vec<SkillCount> = SKILLS
        .iter()
        .map(|s| SkillCount { skill: s.to_string(), shortcut: shortcut_of(s).into(), items: 0, planted: 0 })
        .collect();
    let mut line = Vec::with_capacity(512);
    for i in 0..cfg.questions {
        let k = i % SKILLS.len();
        let skill = SKILLS[k];
        let (question, options, answer, planted) = item(&mut rng, skill, cfg.rate);
        let id = format!("cxr-{:0width$}", i + 1);
        line.clear();
        serde_json::to_writer(&mut line, &Row { id: &id, skill, question: &question, options: &options, answer })
            .map_err(|e| Error::Bug(format!("synth row: {e}")))?;
        line.push(b'\n');
        qs.write_all(&line).map_err(|e| Error::io(&q_path, e))?;
        writeln!(truth, "{id},{skill},{},{}", shortcut_of(skill), u8::from(planted))
            .map_err(|e| Error::io(&t_path, e))?;
        counts[k].items += 1;
        counts[k].planted += usize::from(planted);
    }
    qs.flush().map_err(|e| Error::io(&q_path, e))?;
    truth.flush().map_err(|e| Error::io(&t_path, e))?;
    let toml_path = dir.join("synth.toml");
    std::fs::write(&toml_path, pipeline_text(cfg)).map_err(|e| Error::io(&toml_path, e))?;
    let summary = SynthSummary { questions: cfg.questions, seed: cfg.seed, rate: cfg.rate, skills: counts };
    let json_path = dir.join("synth.json");
    let text = serde_json::to_string_pretty(&summary).map_err(|e| Error::Bug(format!("synth summary: {e}")))?;
    std::fs::write(&json_path, text + "\n").map_err(|e| Error::io(&json_path, e))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_have_four_distinct_options_and_a_valid_gold() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for i in 0..2000 {
            let skill = SKILLS[i % 5];
            let (q, opts, gold, planted) = item(&mut rng, skill, 0.6);
            assert!(!q.is_empty());
            assert_eq!(opts.len(), 4, "{skill}: {opts:?}");
            let mut uniq = opts.clone();
            uniq.sort();
            uniq.dedup();
            assert_eq!(uniq.len(), 4, "{skill}: {opts:?}");
            assert!(gold < 4);
            if planted && skill == "presence" {
                assert_eq!(gold, 1);
            }
            if planted && skill == "differential" {
                assert!(opts.iter().enumerate().all(|(j, o)| j == gold || o.len() < opts[gold].len()));
            }
        }
    }
}
