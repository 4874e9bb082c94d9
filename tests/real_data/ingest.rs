//! Every benchmark of the real-data suite ingests with the counts its
//! README.txt states.

use std::collections::BTreeMap;

use blindspot::sample::{AnswerFormat, Sample};

use crate::common::{ingest_pipeline, root};
use crate::pipeline;

fn count_by<K: Ord>(samples: &[Sample], key: impl Fn(&Sample) -> K) -> BTreeMap<K, usize> {
    let mut m = BTreeMap::new();
    for s in samples {
        *m.entry(key(s)).or_default() += 1;
    }
    m
}

fn letter(s: &Sample) -> char {
    (b'A' + s.answer_index.expect("multiple choice has an index") as u8) as char
}

fn scienceqa_flat_matches_readme_counts() {
    let ing = ingest_pipeline(&pipeline("scienceqa"));
    let s = &ing.samples;
    assert_eq!(s.len(), 4241);
    assert!(s.iter().all(|x| x.answer_format == AnswerFormat::MultipleChoice));
    let n_opts = count_by(s, |x| x.options.len());
    assert_eq!(n_opts, BTreeMap::from([(2, 2228), (3, 971), (4, 1004), (5, 38)]));
    let letters = count_by(s, letter);
    assert_eq!(letters, BTreeMap::from([('A', 1700), ('B', 1689), ('C', 583), ('D', 261), ('E', 8)]));
    // Images are references only (the real-data suite has no ScienceQA images).
    let with_image = s.iter().filter(|x| !x.images.is_empty()).count();
    assert_eq!(with_image, 2017, "IMG context group");
    let txt = s.iter().filter(|x| x.meta.get("context_groups").is_some_and(|g| g.contains("TXT"))).count();
    assert_eq!(txt, 2046);
    // Ids are in natural order: "4" before "11".
    assert_eq!(s[0].id, "4");
}

fn scienceqa_llava_options_parsed_from_questions_match_the_flat_file() {
    let llava = ingest_pipeline(&pipeline("scienceqa-llava"));
    let flat = ingest_pipeline(&pipeline("scienceqa"));
    assert_eq!(llava.samples.len(), 4241);
    let flat_by_id: BTreeMap<&str, &Sample> = flat.samples.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut same = 0;
    for s in &llava.samples {
        let f = flat_by_id[s.id.as_str()];
        assert_eq!(s.answer_index, f.answer_index, "{}", s.id);
        if s.options == f.options {
            same += 1;
        }
    }
    assert_eq!(same, 4241, "options split out of the LLaVA question text equal the flat file's choices");
    assert!(llava.samples.iter().all(|s| !s.question.contains("<image>") && !s.question.contains("\nA. ")));
}

/// `init` on a shared file, its proposal written with `lines` checked, then read with
/// the image names kept (the shared data has no images for it) after `edit`.
fn read_as_init_proposes(file: &str, lines: &[&str], edit: &dyn Fn(String) -> String) -> blindspot::ingest::Ingested {
    let tmp = tempfile::tempdir().unwrap();
    let data = crate::common::data_dir().join(file);
    let out = tmp.path().join("proposed.toml");
    let o = crate::common::blindspot().arg("init").arg(&data).arg("-o").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let toml = std::fs::read_to_string(&out).unwrap();
    for line in lines {
        assert!(toml.lines().any(|l| l.starts_with(line)), "no line {line:?} in\n{toml}");
    }
    std::fs::write(&out, edit(toml.replace("split = \"test\"", "split = \"test\"\nimage-names-only = true"))).unwrap();
    ingest_pipeline(&out)
}

/// `init` on the LLaVA-format file proposes the hand-written pipeline's mapping (the
/// first exchange's turns, the options in the question, letter answers); read as
/// proposed, every question equals the hand pipeline's.
fn scienceqa_llava_as_init_proposes_it_reads_as_the_hand_pipeline() {
    let proposed = read_as_init_proposes(
        "scienceqa/llava_test_CQM-A.json",
        &[
            "options-in-question = true",
            "question = \"conversations.0.value\"",
            "answer = \"conversations.1.value\"",
            "answer-kind = \"letter\"",
            "images = \"image\"",
        ],
        &|t| t,
    );
    let hand = ingest_pipeline(&pipeline("scienceqa-llava"));
    assert_eq!(proposed.samples.len(), 4241);
    for (p, h) in proposed.samples.iter().zip(&hand.samples) {
        assert_eq!(
            (&p.id, &p.question, &p.options, p.answer_index, &p.images),
            (&h.id, &h.question, &h.options, h.answer_index, &h.images)
        );
    }
    // Every conversation is one exchange: nothing is left unread in it.
    assert!(!proposed.stats.notes.iter().any(|n| n.what.contains("is read in part")));
}

/// HallusionBench names no question by one field: `set_id`, `figure_id` and
/// `question_id` repeat across categories. `init` proposes the id the hand pipeline
/// writes, those with `category` and `subcategory`, and its golds of 0 and 1 with the
/// yes/no reading commented for the user; with it, every id and gold reads the same.
fn hallusionbench_as_init_proposes_it_has_the_hand_pipelines_ids() {
    let proposed = read_as_init_proposes(
        "hallusionbench/HallusionBench.json",
        &[
            "id = \"{category}-{subcategory}-{set_id}-{figure_id}-{question_id}\"",
            "answer = \"gt_answer\"",
            "# answer-format = ",
            "# [ingest.answer-map]",
        ],
        &|t| {
            let yes_no = t.lines().map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.starts_with("answer-format") => "answer-format = \"yes_no\"".to_string(),
                Some(rest) if rest.starts_with("[ingest.answer-map]") || rest.starts_with('"') => rest.to_string(),
                _ => l.to_string(),
            });
            yes_no.collect::<Vec<_>>().join("\n")
        },
    );
    let hand = ingest_pipeline(&pipeline("hallusionbench"));
    let read = |i: &blindspot::ingest::Ingested| {
        i.samples.iter().map(|s| (s.id.clone(), s.answer.clone(), s.answer_format)).collect::<Vec<_>>()
    };
    assert_eq!(proposed.samples.len(), 1129);
    assert_eq!(read(&proposed), read(&hand));
}

fn pope_nine_files_of_3000_balanced() {
    let ing = ingest_pipeline(&pipeline("pope"));
    assert_eq!(ing.samples.len(), 27_000);
    assert_eq!(ing.inputs.len(), 9);
    let per_file = count_by(&ing.samples, |s| s.question_type.clone().unwrap());
    assert_eq!(per_file.len(), 9);
    assert!(per_file.values().all(|&n| n == 3000), "{per_file:?}");
    let yes = count_by(&ing.samples, |s| (s.question_type.clone().unwrap(), s.answer.clone()));
    assert!(yes.iter().all(|(_, &n)| n == 1500), "{yes:?}");
    assert!(ing.samples.iter().all(|s| s.answer_format == AnswerFormat::YesNo));
    // 500 images per file; the yes questions share them across random/popular/adversarial.
    let coco_images: std::collections::BTreeSet<_> = ing
        .samples
        .iter()
        .filter(|s| s.question_type.as_deref() == Some("coco_pope_random"))
        .map(|s| s.images[0].path.clone().unwrap())
        .collect();
    assert_eq!(coco_images.len(), 500);
}

fn hallusionbench_counts_and_yes_no_mapping() {
    let ing = ingest_pipeline(&pipeline("hallusionbench"));
    assert_eq!(ing.samples.len(), 1129);
    let answers = count_by(&ing.samples, |s| s.answer.clone());
    assert_eq!(answers, BTreeMap::from([("no".to_string(), 645), ("yes".to_string(), 484)]));
    let groups =
        count_by(&ing.samples, |s| (s.meta["visual_input"].clone(), s.question_type.clone().unwrap()[..2].to_string()));
    assert_eq!(groups[&("0".to_string(), "VS".to_string())], 178, "text-only questions");
    // visual_input 0 rows have no image file.
    let no_image = ing.samples.iter().filter(|s| s.images.is_empty()).count();
    assert_eq!(no_image, 178);
}

fn sugarcrepe_objects_keyed_by_id_both_versions() {
    let refined = ingest_pipeline(&pipeline("sugarcrepe-refined"));
    let unrefined = ingest_pipeline(&pipeline("sugarcrepe-unrefined"));
    let want_refined = [
        ("add_att", 692),
        ("add_obj", 2062),
        ("replace_att", 788),
        ("replace_obj", 1652),
        ("replace_rel", 1406),
        ("swap_att", 666),
        ("swap_obj", 245),
    ];
    let want_unrefined = [
        ("add_att", 1789),
        ("add_obj", 3967),
        ("replace_att", 1703),
        ("replace_obj", 3124),
        ("replace_rel", 3177),
        ("swap_att", 2305),
        ("swap_obj", 1413),
    ];
    for (ing, want) in [(&refined, want_refined), (&unrefined, want_unrefined)] {
        let types = count_by(&ing.samples, |s| s.question_type.clone().unwrap());
        let want: BTreeMap<String, usize> = want.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(types, want);
        // Seeded shuffle: the true caption is not always first (about half each way).
        let first = ing.samples.iter().filter(|s| s.answer_index == Some(0)).count() as f64 / ing.samples.len() as f64;
        assert!((0.45..0.55).contains(&first), "gold first in {first:.3} of items");
        assert!(
            ing.samples.iter().all(|s| s.options.len() == 2 && s.options[s.answer_index.unwrap() as usize] == s.answer)
        );
    }
}

fn vsr_test_splits() {
    let random = ingest_pipeline(&pipeline("vsr-random"));
    assert_eq!(random.samples.len(), 2195);
    let labels = count_by(&random.samples, |s| s.answer.clone());
    assert_eq!(labels, BTreeMap::from([("no".to_string(), 1014), ("yes".to_string(), 1181)]));
    let zeroshot = ingest_pipeline(&pipeline("vsr-zeroshot"));
    assert_eq!(zeroshot.samples.len(), 1222);
    assert!(random.samples.iter().all(|s| s.question_type.is_some() && s.images.len() == 1));
}

fn vqa_rad_whole_file_with_real_images() {
    let ing = ingest_pipeline(&pipeline("vqa-rad-all"));
    assert_eq!(ing.samples.len(), 2248);
    // The one string id and the int ids are all strings, unique.
    assert!(ing.samples.iter().any(|s| s.id == "0"));
    // "CLOSED " with a trailing space is trimmed.
    let types = count_by(&ing.samples, |s| s.meta["answer_type"].clone());
    assert_eq!(types.keys().cloned().collect::<Vec<_>>(), vec!["CLOSED".to_string(), "OPEN".to_string()]);
    // "NULL" means missing: such fields are absent from meta.
    assert!(ing.samples.iter().all(|s| s.meta.values().all(|v| v != "NULL")));
    // Every image found, with dimensions from its header; 314 are referenced.
    assert_eq!(ing.images.len(), 314);
    assert!(
        ing.samples
            .iter()
            .all(|s| s.images.len() == 1 && s.images[0].width.unwrap() > 0 && s.images[0].sha256.is_some())
    );
}

fn demo_split_matches_the_official_test_counts() {
    let ing = ingest_pipeline(&root().join("pipelines/vqa-rad.toml"));
    assert_eq!(ing.samples.len(), 451);
    let answer_types = count_by(&ing.samples, |s| s.meta["answer_type"].clone());
    assert_eq!(answer_types["CLOSED"], 272);
    assert_eq!(answer_types["OPEN"], 179);
    let closed_answers =
        count_by(&ing.samples.iter().filter(|s| s.meta["answer_type"] == "CLOSED").cloned().collect::<Vec<_>>(), |s| {
            s.answer.to_lowercase()
        });
    assert_eq!(closed_answers["no"], 133);
    assert_eq!(closed_answers["yes"], 118);
    let phrase = count_by(&ing.samples, |s| s.meta["phrase_type"].clone());
    assert_eq!(phrase["test_freeform"], 308);
    assert_eq!(phrase["test_para"], 143);
}

pub const TESTS: crate::Tests = &[
    ("scienceqa_flat_matches_readme_counts", scienceqa_flat_matches_readme_counts),
    (
        "scienceqa_llava_options_parsed_from_questions_match_the_flat_file",
        scienceqa_llava_options_parsed_from_questions_match_the_flat_file,
    ),
    (
        "scienceqa_llava_as_init_proposes_it_reads_as_the_hand_pipeline",
        scienceqa_llava_as_init_proposes_it_reads_as_the_hand_pipeline,
    ),
    (
        "hallusionbench_as_init_proposes_it_has_the_hand_pipelines_ids",
        hallusionbench_as_init_proposes_it_has_the_hand_pipelines_ids,
    ),
    ("pope_nine_files_of_3000_balanced", pope_nine_files_of_3000_balanced),
    ("hallusionbench_counts_and_yes_no_mapping", hallusionbench_counts_and_yes_no_mapping),
    ("sugarcrepe_objects_keyed_by_id_both_versions", sugarcrepe_objects_keyed_by_id_both_versions),
    ("vsr_test_splits", vsr_test_splits),
    ("vqa_rad_whole_file_with_real_images", vqa_rad_whole_file_with_real_images),
    ("demo_split_matches_the_official_test_counts", demo_split_matches_the_official_test_counts),
];
