//! A designer's own benchmark, as a new user brings it: a Hugging Face-style
//! Parquet file (an `{bytes, path}` image struct, `question_id`, `choices`,
//! `category` and an integer `answer`) and a JSON-lines file whose image paths
//! are relative to it. The fixtures are generated here, in those public
//! layouts: 40 questions, tiny PNGs.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryArray, Int64Array, ListBuilder, StringArray, StringBuilder, StructArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use common::blindspot;

const N: usize = 40;
const LETTERS: [&str; 4] = ["A", "B", "C", "D"];

/// A solid-colour 8x8 PNG; `k` picks the colour.
fn png(k: usize) -> Vec<u8> {
    let c = [(k * 37 % 256) as u8, (k * 91 % 256) as u8, (k * 151 % 256) as u8];
    let img = image::RgbImage::from_fn(8, 8, |x, y| {
        // A pattern per image, so perceptual hashes differ between images.
        if (x * (k as u32 % 5 + 1) + y).is_multiple_of(3) {
            image::Rgb(c)
        } else {
            image::Rgb([255 - c[0], c[1] / 2, 0])
        }
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// Question `i`: its category, text, choices and the gold's 0-based index.
/// Half the questions are counts whose choices are digits in a shuffled order,
/// so that an integer gold read as option text would name another option.
fn question(i: usize) -> (&'static str, String, Vec<String>, usize) {
    if i.is_multiple_of(2) {
        let digits: Vec<String> = (0..4).map(|d| ((d + i / 2) % 4).to_string()).collect();
        ("count", format!("How many circles are in picture {i}?"), digits, (i / 2) % 4)
    } else {
        let colours = ["red", "green", "blue", "yellow"];
        let choices: Vec<String> = (0..4).map(|d| colours[(d + i) % 4].to_string()).collect();
        ("colour", format!("What colour is the square in picture {i}?"), choices, (i / 3) % 4)
    }
}

/// The image of question `i`: 20 pictures, each shown twice.
fn image_of(i: usize) -> usize {
    i % 20
}

/// `hf/data/test-00000-of-00001.parquet` below `dir`, as the Hub writes it.
fn write_hf_parquet(dir: &Path) -> PathBuf {
    let ids: Vec<String> = (0..N).map(|i| format!("q{i:03}")).collect();
    let mut questions = Vec::new();
    let mut choices = ListBuilder::new(StringBuilder::new());
    let mut answers = Vec::new();
    let mut categories = Vec::new();
    let mut bytes: Vec<Vec<u8>> = Vec::new();
    let mut paths = Vec::new();
    for i in 0..N {
        let (cat, q, ch, gold) = question(i);
        questions.push(q);
        for c in &ch {
            choices.values().append_value(c);
        }
        choices.append(true);
        answers.push(gold as i64);
        categories.push(cat);
        bytes.push(png(image_of(i)));
        paths.push(format!("img_{:02}.png", image_of(i)));
    }
    let image = StructArray::from(vec![
        (
            Arc::new(Field::new("bytes", DataType::Binary, true)),
            Arc::new(BinaryArray::from_iter_values(bytes.iter())) as ArrayRef,
        ),
        (Arc::new(Field::new("path", DataType::Utf8, true)), Arc::new(StringArray::from(paths)) as ArrayRef),
    ]);
    let choices = choices.finish();
    let features = r#"{"info": {"features": {"question_id": {"dtype": "string", "_type": "Value"}, "image": {"_type": "Image"}, "question": {"dtype": "string", "_type": "Value"}, "choices": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"}, "answer": {"dtype": "int64", "_type": "Value"}, "category": {"dtype": "string", "_type": "Value"}}}}"#;
    let schema = Schema::new(vec![
        Field::new("question_id", DataType::Utf8, true),
        Field::new("image", image.data_type().clone(), true),
        Field::new("question", DataType::Utf8, true),
        Field::new("choices", choices.data_type().clone(), true),
        Field::new("answer", DataType::Int64, true),
        Field::new("category", DataType::Utf8, true),
    ])
    .with_metadata(std::collections::HashMap::from([("huggingface".to_string(), features.to_string())]));
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(ids)),
            Arc::new(image),
            Arc::new(StringArray::from(questions)),
            Arc::new(choices),
            Arc::new(Int64Array::from(answers)),
            Arc::new(StringArray::from(categories)),
        ],
    )
    .unwrap();
    let path = dir.join("hf/data/test-00000-of-00001.parquet");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

/// `jsonl/bench.jsonl` below `dir`, its images in `jsonl/images/`, named
/// relative to the file; the gold is a letter.
fn write_jsonl(dir: &Path) -> PathBuf {
    let root = dir.join("jsonl");
    std::fs::create_dir_all(root.join("images")).unwrap();
    let mut text = String::new();
    for i in 0..N {
        let (cat, q, ch, gold) = question(i);
        let name = format!("images/img_{:02}.png", image_of(i));
        std::fs::write(root.join(&name), png(image_of(i))).unwrap();
        let rec = serde_json::json!({
            "qid": format!("q{i:03}"),
            "question": q,
            "choices": ch,
            "answer": LETTERS[gold],
            "category": cat,
            "image": name,
        });
        text.push_str(&rec.to_string());
        text.push('\n');
    }
    let path = root.join("bench.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs blindspot in `dir`; the output, whatever the exit status.
fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    blindspot().current_dir(dir).args(args).output().unwrap()
}

/// Runs blindspot in `dir` and requires success.
fn ok(dir: &Path, args: &[&str]) -> std::process::Output {
    let o = run(dir, args);
    assert!(o.status.success(), "blindspot {}: {}\n{}", args.join(" "), stderr(&o), stdout(&o));
    o
}

/// Runs `init` in `dir` with `args`, then requires the pipeline it wrote (`pipeline`)
/// to hold a line starting with each of `lines`; what init printed, and the pipeline.
fn init_proposes(dir: &Path, args: &[&str], pipeline: &str, lines: &[&str]) -> (String, String) {
    let o = ok(dir, &[&["init"], args].concat());
    let toml = std::fs::read_to_string(dir.join(pipeline)).unwrap();
    for line in lines {
        assert!(toml.lines().any(|l| l.starts_with(line)), "no line {line:?} in\n{toml}");
    }
    (stdout(&o), toml)
}

/// The questions of pipeline `pipeline` in `dir`, all `N` of them.
fn read_as_proposed(dir: &Path, pipeline: &str) -> Vec<blindspot::sample::Sample> {
    let samples = common::ingest_pipeline(&dir.join(pipeline)).samples;
    assert_eq!(samples.len(), N);
    samples
}

/// Ingests pipeline `pipeline` in `dir`: every question `i` (read from its id by
/// `index`) must hold the options and gold of `question(i)`.
fn reads_every_question(dir: &Path, pipeline: &str, index: impl Fn(&str) -> usize) {
    let samples = read_as_proposed(dir, pipeline);
    for s in &samples {
        let (_, _, ch, gold) = question(index(&s.id));
        assert_eq!((&s.options, s.answer_index), (&ch, Some(gold as i32)), "{}", s.id);
    }
}

/// The blind accuracy `diagnose` prints ("blind accuracy 41.25% ...").
fn blind_accuracy(o: &std::process::Output) -> f64 {
    let text = stdout(o);
    let at = text.find("blind accuracy ").unwrap_or_else(|| panic!("no blind accuracy in {text}"));
    text[at + 15..].split('%').next().unwrap().parse().unwrap()
}

/// `init` proposes the Hub file's mapping with no hand edits: the id named
/// like one, the integer answer as a 0-based index, the category as the type,
/// the `{bytes, path}` struct as the images; `build` then builds it; the
/// release reads back, from its folder and from its data file, with the
/// pipeline's blind accuracy.
#[test]
fn hf_parquet_init_build_and_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_hf_parquet(d);
    let o = ok(d, &["init", "hf/data/test-00000-of-00001.parquet", "-o", "bench.toml"]);
    let said = stdout(&o);
    assert!(said.contains("next: blindspot validate bench.toml && blindspot build bench.toml"), "{said}");
    let toml = std::fs::read_to_string(d.join("bench.toml")).unwrap();
    for line in [
        "path = \"hf/data/test-00000-of-00001.parquet\"",
        "id = \"question_id\"",
        "question = \"question\"",
        "options = \"choices\"",
        "answer = \"answer\"",
        "answer-kind = \"index\"",
        "question-type = \"category\"",
        "images = \"image\"",
        "group-by = \"image\"",
    ] {
        assert!(toml.lines().any(|l| l.starts_with(line)), "no line {line:?} in\n{toml}");
    }
    ok(d, &["validate", "bench.toml"]);
    let o = ok(d, &["build", "bench.toml", "--out-dir", "out"]);
    assert!(stdout(&o).starts_with("hf 0.1.0: 40 samples"), "{}", stdout(&o));
    assert!(d.join("out/hf/0.1.0/data/test-00000-of-00001.parquet").is_file());
    // Every image count of the card is of distinct images by content, each of
    // the set it names: the source's 20, and the default config's after pruning.
    let card = std::fs::read_to_string(d.join("out/hf/0.1.0/README.md")).unwrap();
    let removed = std::fs::read_to_string(d.join("out/hf/0.1.0/report/removed.csv")).unwrap();
    let kept: std::collections::BTreeSet<usize> =
        (0..N).filter(|i| !removed.contains(&format!("q{i:03}"))).map(image_of).collect();
    assert!(card.contains("40 questions about 20 distinct image files"), "{card}");
    assert!(card.contains("20 of the 20 distinct images are asked about more than once"), "{card}");
    let embedded = if kept.len() < 20 {
        format!("({} of the source's 20 distinct images; the others are only in removed questions)", kept.len())
    } else {
        "(20 distinct images)".to_string()
    };
    assert!(card.contains(&embedded), "{embedded} not in\n{card}");

    // Read back: without pruning (which would leave the default config a subset),
    // the release holds the pipeline's questions, and diagnoses as the pipeline does.
    let start = toml.find("[prune]").unwrap();
    let end = toml.find("[variants]").unwrap();
    let unpruned = format!("{}{}", &toml[..start], &toml[end..]).replace("version = \"0.1.0\"", "version = \"0.2.0\"");
    std::fs::write(d.join("unpruned.toml"), unpruned).unwrap();
    ok(d, &["build", "unpruned.toml", "--out-dir", "out"]);
    let pipeline = ok(d, &["diagnose", "unpruned.toml", "-o", "d-pipeline"]);
    let folder = ok(d, &["diagnose", "out/hf/0.2.0", "--group-by", "image", "-o", "d-folder"]);
    let file =
        ok(d, &["diagnose", "out/hf/0.2.0/data/test-00000-of-00001.parquet", "--group-by", "image", "-o", "d-file"]);
    assert!(stdout(&folder).starts_with("40 questions"), "{}", stdout(&folder));
    assert!(stdout(&file).starts_with("40 questions"), "{}", stdout(&file));
    assert_eq!(blind_accuracy(&folder), blind_accuracy(&pipeline), "{}\n{}", stdout(&folder), stdout(&pipeline));
    assert_eq!(blind_accuracy(&file), blind_accuracy(&pipeline));
}

/// The JSON-lines file: ids under `qid`, letters as answers, image paths
/// relative to the file, found beside it.
#[test]
fn jsonl_init_build() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_jsonl(d);
    init_proposes(
        d,
        &["jsonl/bench.jsonl", "-o", "bench.toml"],
        "bench.toml",
        &[
            "path = \"jsonl/bench.jsonl\"",
            "images = \"jsonl\"",
            "id = \"qid\"",
            "options = \"choices\"",
            "answer-kind = \"letter\"",
            "question-type = \"category\"",
            "images = \"image\"",
        ],
    );
    let o = ok(d, &["build", "bench.toml", "--out-dir", "out"]);
    assert!(stdout(&o).starts_with("bench 0.1.0: 40 samples"), "{}", stdout(&o));
    assert!(d.join("out/bench/0.1.0/data/test-00000-of-00001.parquet").is_file());
}

/// A VLMEvalKit benchmark TSV as pandas writes it: `index`, `question`, one column per
/// option `A`-`D` with `nan` where a question has fewer options, the gold's letter in
/// `answer`, `category`. `init` maps the letter columns with no hand edit; the build
/// reads every question with its own options, counts the dropped `nan` cells, and
/// keeps each gold on its letter.
#[test]
fn vlmevalkit_tsv_letter_columns_init_build() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::from("index\tquestion\tA\tB\tC\tD\tanswer\tcategory\n");
    let mut three = 0;
    for i in 0..N {
        let (cat, q, mut ch, gold) = question(i);
        // Every third question has three options, when its gold is not the fourth.
        if i.is_multiple_of(3) && gold < 3 {
            ch[3] = "nan".into();
            three += 1;
        }
        text.push_str(&format!("{i}\t{q}\t{}\t{}\t{cat}\n", ch.join("\t"), LETTERS[gold]));
    }
    std::fs::write(d.join("bench.tsv"), text).unwrap();
    let (said, toml) = init_proposes(
        d,
        &["bench.tsv"],
        "bench.toml",
        &["id = \"index\"", "options = [\"A\", \"B\", \"C\", \"D\"]", "answer-kind = \"letter\""],
    );
    assert!(said.contains("options        <- \"A\", \"B\", \"C\", \"D\""), "{said}");
    // The letter columns are the options, not meta.
    assert!(!toml.contains("# meta = [\"A\""), "{toml}");
    let o = ok(d, &["ingest", "bench.toml", "--out", "bench.parquet"]);
    let warned = format!("{three} rows: absent option cells");
    assert!(stderr(&o).contains(&warned), "no {warned:?} in {}", stderr(&o));
    let samples = read_as_proposed(d, "bench.toml");
    for s in &samples {
        let i: usize = s.id.parse().unwrap();
        let (_, _, ch, gold) = question(i);
        let k = if i.is_multiple_of(3) && gold < 3 { 3 } else { 4 };
        assert_eq!(s.options, ch[..k], "{}", s.id);
        assert_eq!((s.answer_index, s.answer.as_str()), (Some(gold as i32), ch[gold].as_str()), "{}", s.id);
    }
    // Columns A, B and D: mapping A and B would leave D's option out, so init maps none
    // and says why.
    std::fs::write(d.join("gap.tsv"), "index\tquestion\tA\tB\tD\tanswer\n0\tq?\tx\ty\tz\tA\n1\tr?\tx\ty\tz\tB\n")
        .unwrap();
    let o = ok(d, &["init", "gap.tsv"]);
    let toml = std::fs::read_to_string(d.join("gap.toml")).unwrap();
    let line = toml.lines().find(|l| l.contains("options = ")).unwrap_or_default();
    assert!(line.starts_with("# options = \"...\"") && line.contains("then \"D\" after a gap"), "{toml}");
    assert!(stdout(&o).contains("options           not mapped: the option columns run"), "{}", stdout(&o));
}

/// A CSV as pandas' `to_csv` writes a data frame: the row index in an unnamed first
/// column, each question's options list as text (`['red', 'blue']`), a `nan` cell.
/// init maps the index as the id, the list column as the options and the gold letter
/// as a letter; ingest reads each list back option for option.
#[test]
fn a_pandas_csv_with_list_text_options_is_proposed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::from(",question,options,answer,difficulty\n");
    for i in 0..N {
        let (_, q, ch, gold) = question(i);
        let list: Vec<String> = ch.iter().map(|c| format!("'{c}'")).collect();
        let difficulty = if i % 4 == 0 { "nan" } else { "2.0" };
        text.push_str(&format!("{i},{q},\"[{}]\",{},{difficulty}\n", list.join(", "), LETTERS[gold]));
    }
    std::fs::write(d.join("bench.csv"), text).unwrap();
    init_proposes(
        d,
        &["bench.csv"],
        "bench.toml",
        &["id = \"Unnamed: 0\"", "options = \"options\"", "answer-kind = \"letter\""],
    );
    reads_every_question(d, "bench.toml", |id| id.parse().unwrap());
}

/// A CSV written from `datasets`' `to_pandas()`: list columns arrive as NumPy arrays,
/// whose repr separates items by white space alone and wraps long ones onto another
/// line (`['red' 'green'\n 'blue' 'yellow']`); a numeric list is `[0 1 2 3]`. init maps
/// them as the options, and ingest reads each option back as written.
#[test]
fn a_csv_of_numpy_array_options_is_proposed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::from("question_id,question,choices,answer\n");
    for i in 0..N {
        let (_, q, ch, gold) = question(i);
        let list: Vec<String> = ch.iter().map(|c| format!("'{c}'")).collect();
        // Counting questions' digits as NumPy writes integers; the rest wrapped.
        let cell = if i.is_multiple_of(2) {
            format!("[{}]", ch.join(" "))
        } else {
            format!("[{} {}\n {} {}]", list[0], list[1], list[2], list[3])
        };
        text.push_str(&format!("{i},{q},\"{cell}\",{gold}\n"));
    }
    std::fs::write(d.join("bench.csv"), text).unwrap();
    init_proposes(d, &["bench.csv"], "bench.toml", &["options = \"choices\"", "answer-kind = \"index\""]);
    reads_every_question(d, "bench.toml", |id| id.parse().unwrap());
}

/// VQA-style reference answers in a CSV, as pandas writes a list column (`"['stop',
/// 'stop', 'go']"`, or NumPy's `"['go' 'go']"`): init proposes the column with
/// `reference-answers`, and each gold is the most common of the list read from the text.
#[test]
fn a_csv_of_reference_answer_lists_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::from("question_id,question,answers\n");
    for i in 0..N {
        let cell = if i.is_multiple_of(2) { "['stop', 'stop', 'go']" } else { "['go' 'go'\n 'stop']" };
        text.push_str(&format!("{i},what does sign {i} say?,\"{cell}\"\n"));
    }
    std::fs::write(d.join("signs.csv"), text).unwrap();
    init_proposes(d, &["signs.csv"], "signs.toml", &["answer = \"answers\"", "reference-answers = \"majority\""]);
    for s in read_as_proposed(d, "signs.toml") {
        let i: usize = s.id.parse().unwrap();
        assert_eq!(s.answer, if i.is_multiple_of(2) { "stop" } else { "go" }, "{}", s.id);
        let kept: Vec<String> = serde_json::from_str(&s.meta["answers"]).unwrap();
        assert_eq!(kept.len(), 3);
    }
}

/// A designer's own spreadsheet (`tests/fixtures/good/designer.xlsx`, written by
/// `tests/fixtures/predictions/make_xlsx.py`): numeric ids, options in columns
/// `Option A` to `Option D` (empty where a question has three), the gold's letter in
/// `Correct Answer`. init maps every field with no hand edit; ingest keeps each option
/// on its letter and each id exact.
#[test]
fn a_designer_spreadsheet_with_option_columns_is_proposed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(common::root().join("tests/fixtures/good/designer.xlsx"), d.join("designer.xlsx")).unwrap();
    init_proposes(
        d,
        &["designer.xlsx"],
        "designer.toml",
        &[
            "id = \"ID\"",
            "options = [\"Option A\", \"Option B\", \"Option C\", \"Option D\"]",
            "answer = \"Correct Answer\"",
            "answer-kind = \"letter\"",
            "question-type = \"Subject\"",
        ],
    );
    let o = ok(d, &["ingest", "designer.toml", "--out", "designer.parquet"]);
    assert!(stderr(&o).contains("8 rows: absent option cells"), "{}", stderr(&o));
    let samples = common::ingest_pipeline(&d.join("designer.toml")).samples;
    assert_eq!(samples.len(), 24);
    let colours = ["red", "green", "blue", "yellow"];
    for (i, s) in samples.iter().enumerate() {
        let k = if i.is_multiple_of(3) { 3 } else { 4 };
        let options: Vec<&str> = (0..k).map(|j| colours[(j + i) % 4]).collect();
        assert_eq!(
            (s.id.as_str(), &s.options, s.answer_index),
            (format!("{}", 1000 + i).as_str(), &options.iter().map(|o| o.to_string()).collect(), Some((i % 3) as i32))
        );
    }
}

/// A file init cannot map whole (no id field): the pipeline is still written and the
/// mapping printed; grouping folds by image, which needs the questions ingested, is left
/// unset with why.
#[test]
fn init_proposes_what_it_can_when_the_questions_do_not_ingest_yet() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let path = write_jsonl(d);
    let text = std::fs::read_to_string(&path).unwrap();
    let without_answers: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("answer");
            v.to_string()
        })
        .collect();
    std::fs::write(&path, without_answers.join("\n")).unwrap();
    let o = ok(d, &["init", "jsonl/bench.jsonl", "-o", "bench.toml"]);
    let out = stdout(&o);
    assert!(
        out.contains("group-by          not set: not checked, the questions do not ingest as proposed yet"),
        "{out}"
    );
    assert!(out.contains("answer            not mapped") && out.contains("images         <- \"image\""), "{out}");
    let toml = std::fs::read_to_string(d.join("bench.toml")).unwrap();
    assert!(toml.lines().any(|l| l.starts_with("# group-by = \"image\"")), "{toml}");
}

/// The Hub's ARC-style layout: `choices` an object of parallel `text` and `label`
/// lists, the gold in `answerKey`. init maps both with no hand edit.
#[test]
fn arc_style_choices_and_answer_key_are_proposed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::new();
    for i in 0..N {
        let (_, q, ch, gold) = question(i);
        let rec = serde_json::json!({"id": format!("Mercury_{i}"), "question": q,
            "choices": {"text": ch, "label": LETTERS}, "answerKey": LETTERS[gold]});
        text.push_str(&format!("{rec}\n"));
    }
    std::fs::write(d.join("arc.jsonl"), text).unwrap();
    init_proposes(
        d,
        &["arc.jsonl"],
        "arc.toml",
        &["options = \"choices\"", "answer = \"answerKey\"", "answer-kind = \"letter\""],
    );
    reads_every_question(d, "arc.toml", |id| id["Mercury_".len()..].parse().unwrap());
}

/// A JSON object keyed by id, written on one line (`json.dump` without an indent):
/// init maps the keys as the ids, and a bad record is located by its column.
#[test]
fn an_object_keyed_by_id_is_read_by_its_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Record k07's gold `bad` a letter it has no option for.
    let keyed = |bad: bool| {
        let mut records = serde_json::Map::new();
        for i in 0..N {
            let (cat, q, ch, gold) = question(i);
            let answer = if bad && i == 7 { "Z" } else { LETTERS[gold] };
            records.insert(
                format!("k{i:02}"),
                serde_json::json!({"question": q, "choices": ch, "answer": answer, "category": cat}),
            );
        }
        serde_json::Value::Object(records).to_string()
    };
    let text = keyed(false);
    assert!(!text.contains('\n'));
    std::fs::write(d.join("keyed.json"), &text).unwrap();
    let o = ok(d, &["init", "keyed.json"]);
    let toml = std::fs::read_to_string(d.join("keyed.toml")).unwrap();
    assert!(toml.lines().any(|l| l.starts_with("id = \"_key\"")), "{toml}");
    assert!(stdout(&o).contains("id             <- \"_key\" (the records are an object keyed by id"), "{}", stdout(&o));
    let samples = common::ingest_pipeline(&d.join("keyed.toml")).samples;
    let ids: Vec<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, (0..N).map(|i| format!("k{i:02}")).collect::<Vec<_>>());
    // The bad record, on the file's one line, is located by its column.
    let bad = keyed(true);
    std::fs::write(d.join("keyed.json"), &bad).unwrap();
    let o = run(d, &["ingest", "keyed.toml", "--out", "k.parquet"]);
    let column = bad[..bad.find("\"k07\"").unwrap()].chars().count() + 7;
    assert!(!o.status.success() && stderr(&o).contains(&format!("keyed.json:1:{column}: ")), "{}", stderr(&o));
}

/// Every question about one picture: grouping folds by image would leave one
/// fold group, so init leaves `group-by` commented with diagnose's reason and
/// the pipeline builds as written.
#[test]
fn init_does_not_group_by_image_where_folds_cannot_be_filled() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_jsonl(d);
    let path = d.join("jsonl/bench.jsonl");
    let one: String = std::fs::read_to_string(&path).unwrap().lines().map(|l| on_first_picture(l) + "\n").collect();
    std::fs::write(&path, one).unwrap();
    let o = ok(d, &["init", "jsonl/bench.jsonl", "-o", "bench.toml"]);
    let toml = std::fs::read_to_string(d.join("bench.toml")).unwrap();
    let line = toml.lines().find(|l| l.contains("group-by")).unwrap();
    assert!(line.starts_with("# group-by = \"image\""), "{line}");
    assert!(line.contains("has 1 distinct image"), "{line}");
    assert!(stdout(&o).contains("group-by          not set: "), "{}", stdout(&o));
    let o = ok(d, &["build", "bench.toml", "--out-dir", "out"]);
    assert!(stdout(&o).starts_with("bench 0.1.0: 40 samples"), "{}", stdout(&o));
}

/// Without `[diagnose]`, pruning still diagnoses the set before removing
/// anything: the card states that measurement beside the after-pruning one
/// rather than saying blind answerability was not measured.
#[test]
fn a_pipeline_without_diagnose_states_what_pruning_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_jsonl(d);
    ok(d, &["init", "jsonl/bench.jsonl", "-o", "bench.toml"]);
    let toml = std::fs::read_to_string(d.join("bench.toml")).unwrap();
    let (head, rest) = toml.split_once("[diagnose]\n").unwrap();
    let rest = &rest[rest.find("\n\n").unwrap()..];
    std::fs::write(d.join("bench.toml"), format!("{head}{rest}")).unwrap();
    ok(d, &["build", "bench.toml", "--out-dir", "out"]);
    let card = std::fs::read_to_string(d.join("out/bench/0.1.0/README.md")).unwrap();
    assert!(!card.contains("was not measured"), "{card}");
    assert!(card.contains("Blind answerability was measured by pruning only"), "{card}");
}

/// Folds grouped by near-duplicate image clusters, with pruning: the release's
/// diagnosis states how the images clustered (`image_clusters` in
/// `report/diagnose.json`, the sentence on the card), as `blindspot diagnose`
/// does; the diagnosis is IBP's first iteration, not a second measurement.
#[test]
fn a_pruned_release_states_its_image_clusters() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_jsonl(d);
    ok(d, &["init", "jsonl/bench.jsonl", "-o", "bench.toml"]);
    let toml = std::fs::read_to_string(d.join("bench.toml")).unwrap();
    assert!(toml.contains("group-by = \"image\"") && toml.contains("[prune]"), "{toml}");
    // The fixture's drawn images fall into 4 clusters per question type: 3 folds.
    let toml =
        toml.replacen("group-by = \"image\"", "group-by = \"image-cluster\"", 1).replacen("folds = 5", "folds = 3", 1);
    let toml = toml.replacen("[prune]\n", "[prune]\nstop = \"budget\"\n", 1);
    std::fs::write(d.join("bench.toml"), toml).unwrap();
    ok(d, &["build", "bench.toml", "--out-dir", "out"]);
    let release = d.join("out/bench/0.1.0");
    let removed = std::fs::read_to_string(release.join("report/removed.csv")).unwrap();
    assert!(removed.lines().count() > 1, "{removed}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(release.join("report/diagnose.json")).unwrap()).unwrap();
    let clusters = &report["image_clusters"];
    assert_eq!(clusters["images"], 20, "{report}");
    assert_eq!(clusters["hashed"], 20, "{report}");
    assert!(clusters["joining"].as_u64().is_some_and(|n| n > 0), "{report}");
    let card = std::fs::read_to_string(release.join("README.md")).unwrap();
    assert!(card.contains("Near-duplicate images (both perceptual hashes within"), "{card}");
}

/// A JSON line with its `image` pointing at the first picture.
fn on_first_picture(line: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["image"] = serde_json::json!("images/img_00.png");
    v.to_string()
}

/// Two fields named like an id: init chooses neither, names both, and says so.
#[test]
fn init_leaves_a_choice_between_two_columns_to_the_user() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::new();
    for i in 0..6 {
        text.push_str(&format!(
            "{{\"question_id\": \"q{i}\", \"uid\": \"u{i}\", \"question\": \"Is it {i}?\", \"answer\": \"yes\"}}\n"
        ));
    }
    std::fs::write(d.join("two.jsonl"), text).unwrap();
    let o = ok(d, &["init", "two.jsonl"]);
    let toml = std::fs::read_to_string(d.join("two.toml")).unwrap();
    let id = toml.lines().find(|l| l.contains("id = ")).unwrap();
    assert!(id.starts_with("# id = \"...\""), "{id}");
    assert!(id.contains("\"question_id\" or \"uid\" could each be the id"), "{id}");
    assert!(stdout(&o).contains("; choose: id"), "{}", stdout(&o));
}

/// A field missing from every row is one error with its count and first rows,
/// naming the field that could be it and the flag that maps it; mapped with
/// `--field`, the integer answer is read as the index its type says.
#[test]
fn missing_field_is_one_error_and_field_flag_maps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_hf_parquet(d);
    let o = run(d, &["diagnose", "hf/data/test-00000-of-00001.parquet", "-o", "out"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.matches("no id (looked for \"id\")").count(), 1, "{err}");
    assert!(
        err.contains(
            "hf/data/test-00000-of-00001.parquet: rows 1, 2, 3, 4, 5, ... (40 rows): field \"id\": no id (looked for \"id\")"
        ),
        "{err}"
    );
    assert!(err.contains("--field id=question_id"), "{err}");
    let o = ok(
        d,
        &[
            "diagnose",
            "hf/data/test-00000-of-00001.parquet",
            "--field",
            "id=question_id",
            "--field",
            "question-type=category",
            "-o",
            "out",
        ],
    );
    assert!(stdout(&o).starts_with("40 questions"), "{}", stdout(&o));
    assert!(stdout(&o).contains("count / multiple_choice: n 20"), "{}", stdout(&o));
    let o = run(d, &["diagnose", "hf/data/test-00000-of-00001.parquet", "--field", "ids=question_id", "-o", "o2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no canonical field \"ids\""), "{}", stderr(&o));
    assert!(stderr(&o).contains("did you mean \"id\"?"), "{}", stderr(&o));
}

/// Image paths of a data file resolve against its folder: `dups` hashes every
/// image, and `--images` names another folder.
#[test]
fn images_beside_the_file_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_jsonl(d);
    let o = ok(d, &["dups", "jsonl/bench.jsonl", "--field", "id=qid", "--exact-only", "-o", "dups"]);
    assert!(stdout(&o).contains("; 20 images (20 hashed)"), "{}", stdout(&o));
    let o = ok(d, &["diagnose", "jsonl/bench.jsonl", "--field", "id=qid", "--group-by", "image-cluster", "-o", "diag"]);
    assert!(stdout(&o).starts_with("40 questions"), "{}", stdout(&o));
    // Elsewhere, the paths are not found: kept as names, counted.
    std::fs::create_dir_all(d.join("other")).unwrap();
    std::fs::rename(d.join("jsonl/images"), d.join("other/images")).unwrap();
    let o = ok(d, &["dups", "jsonl/bench.jsonl", "--field", "id=qid", "--exact-only", "-o", "dups2"]);
    assert!(stdout(&o).contains("(0 hashed)"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("40 rows: images named by path were not found relative to the input file's folder"),
        "{}",
        stderr(&o)
    );
    let o =
        ok(d, &["dups", "jsonl/bench.jsonl", "--field", "id=qid", "--images", "other", "--exact-only", "-o", "dups3"]);
    assert!(stdout(&o).contains("; 20 images (20 hashed)"), "{}", stdout(&o));
}

/// `hf/data/test-00000-of-00001.parquet` below `dir` whose integer `answer`
/// is a `ClassLabel` (names `no`, `yes`, `maybe`) in the schema's Hugging Face
/// features, as `datasets` writes it: questions 0-5 have no options (the
/// class is the answer), 6-7 have options (the integer is the option's
/// position); `answers[i]` is question i's integer.
fn write_hf_classlabel_parquet(dir: &Path, answers: &[i64]) {
    let n = answers.len();
    let mut options = ListBuilder::new(StringBuilder::new());
    for i in 0..n {
        if i >= 6 {
            for c in ["red", "green", "blue"] {
                options.values().append_value(c);
            }
        }
        options.append(true);
    }
    let options = options.finish();
    let features = r#"{"info": {"features": {"id": {"dtype": "string", "_type": "Value"}, "question": {"dtype": "string", "_type": "Value"}, "options": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"}, "answer": {"names": ["no", "yes", "maybe"], "_type": "ClassLabel"}}}}"#;
    let schema = Schema::new(vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("question", DataType::Utf8, true),
        Field::new("options", options.data_type().clone(), true),
        Field::new("answer", DataType::Int64, true),
    ])
    .with_metadata(std::collections::HashMap::from([("huggingface".to_string(), features.to_string())]));
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from((0..n).map(|i| format!("q{i}")).collect::<Vec<_>>())),
            Arc::new(StringArray::from((0..n).map(|i| format!("Is there a finding in scan {i}?")).collect::<Vec<_>>())),
            Arc::new(options),
            Arc::new(Int64Array::from(answers.to_vec())),
        ],
    )
    .unwrap();
    let path = dir.join("hf/data/test-00000-of-00001.parquet");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    std::fs::write(
        dir.join("bench.toml"),
        "[dataset]\nname = \"cl\"\nversion = \"1.0.0\"\nlicense = \"CC0-1.0\"\n\n[ingest]\npath = \"hf\"\nimage-names-only = true\n",
    )
    .unwrap();
}

/// A `ClassLabel` answer on a question without options is its class's name
/// (as `datasets` and the Hub's viewer show it), not the class number as
/// text; on a question with options it stays the option's position. The
/// reading is said, with the names, in ingest's notes; a class the column
/// does not name is a located error.
#[test]
fn hf_classlabel_answers_are_read_by_name_where_there_are_no_options() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_hf_classlabel_parquet(d, &[0, 1, 1, 0, 2, 1, 1, 2]);
    let o = ok(d, &["ingest", "bench.toml", "-o", "out.parquet"]);
    let samples = blindspot::io::parquet::read_samples(&d.join("out.parquet")).unwrap();
    let answers: Vec<(&str, &str, Option<i32>)> =
        samples.iter().map(|s| (s.id.as_str(), s.answer.as_str(), s.answer_index)).collect();
    assert_eq!(
        answers,
        vec![
            ("q0", "no", None),
            ("q1", "yes", None),
            ("q2", "yes", None),
            ("q3", "no", None),
            ("q4", "maybe", None),
            ("q5", "yes", None),
            ("q6", "green", Some(1)),
            ("q7", "blue", Some(2)),
        ]
    );
    let said = stderr(&o);
    assert!(
        said.contains(
            "ingest: 6 rows: answers of questions without options were read from the ClassLabel column \"answer\" \
             as their class names (0 = \"no\", 1 = \"yes\", 2 = \"maybe\"), as the file's Hugging Face features name \
             them (first: hf/data/test-00000-of-00001.parquet: row 1)"
        ),
        "{said}"
    );

    write_hf_classlabel_parquet(d, &[0, 1, 3, 0, -1, 1, 1, 2]);
    let o = run(d, &["ingest", "bench.toml", "-o", "out2.parquet"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(
            "test-00000-of-00001.parquet: row 3: field \"answer\": the answer is class 3, but the ClassLabel column \
             \"answer\" names 3 classes (0 to 2)"
        ),
        "{said}"
    );
    assert!(
        said.contains("row 5: field \"answer\": the answer is class -1, which `datasets` writes for a row"),
        "{said}"
    );
    assert!(!d.join("out2.parquet").exists());
}

/// A POPE-style yes/no file (the layout LLaVA's evaluation files copy): `question_id`,
/// the image's file name, the question in `text`, the gold in `label`. No field is
/// named like a question, so init proposes the one text field whose values end in a
/// question mark; every question is read with its gold.
#[test]
fn a_question_in_a_text_field_is_proposed_by_its_question_marks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::new();
    for i in 0..N {
        std::fs::write(d.join(format!("COCO_{:012}.png", image_of(i))), png(image_of(i))).unwrap();
        let rec = serde_json::json!({"question_id": i + 1, "image": format!("COCO_{:012}.png", image_of(i)),
            "text": format!("Is there a dog in picture {i}?"), "label": if i.is_multiple_of(3) { "yes" } else { "no" }});
        text.push_str(&format!("{rec}\n"));
    }
    std::fs::write(d.join("pope.jsonl"), text).unwrap();
    let (said, _) = init_proposes(
        d,
        &["pope.jsonl"],
        "pope.toml",
        &["id = \"question_id\"", "question = \"text\"", "answer = \"label\"", "images = \"image\""],
    );
    assert!(said.contains(&format!("{N} of its {N} values read end in a question mark")), "{said}");
    let samples = read_as_proposed(d, "pope.toml");
    for s in &samples {
        let i: usize = s.id.parse::<usize>().unwrap() - 1;
        assert_eq!(s.question, format!("Is there a dog in picture {i}?"));
        assert_eq!(s.answer, if i.is_multiple_of(3) { "yes" } else { "no" });
    }
}

/// A SEED-Bench-style JSON object: the records under `questions` beside a lookup table,
/// options in `choice_a`-`choice_d`, the gold's letter, `question_id`, the image's file
/// name in `data_id`, a `data_type` of one value and the type as an integer code. init
/// takes `question_id` as the id (a field naming image files is the image, not an id) and
/// the code as the question type, never the field that takes one value.
#[test]
fn an_image_file_field_is_no_id_and_a_constant_field_no_type() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut questions = Vec::new();
    for i in 0..N {
        let (_, q, ch, gold) = question(i);
        std::fs::write(d.join(format!("{:05}.png", i)), png(image_of(i))).unwrap();
        questions.push(serde_json::json!({"answer": LETTERS[gold], "choice_a": ch[0], "choice_b": ch[1],
            "choice_c": ch[2], "choice_d": ch[3], "data_id": format!("{:05}.png", i), "data_type": "image",
            "question": q, "question_id": format!("{}", 100 + i), "question_type_id": 1 + i % 2}));
    }
    let whole = serde_json::json!({"question_type": {"Counting": 1, "Colour": 2}, "questions": questions});
    std::fs::write(d.join("seed.json"), whole.to_string()).unwrap();
    let (_, toml) = init_proposes(
        d,
        &["seed.json"],
        "seed.toml",
        &["id = \"question_id\"", "answer-kind = \"letter\"", "images = \"data_id\""],
    );
    assert!(toml.contains("options = [\"choice_a\", \"choice_b\", \"choice_c\", \"choice_d\"]"), "{toml}");
    // The type is its integer code; the constant `data_type` is never the type.
    assert!(toml.lines().any(|l| l.starts_with("question-type = \"question_type_id\"")), "{toml}");
    reads_every_question(d, "seed.toml", |id| id.parse::<usize>().unwrap() - 100);
    let samples = read_as_proposed(d, "seed.toml");
    let code = |id: &str| ["1", "2"][(id.parse::<usize>().unwrap() - 100) % 2];
    assert!(samples.iter().all(|s| s.question_type.as_deref() == Some(code(&s.id))));
}

/// A MathVista-style JSON list: the id in `pid`, `choices` a list for multiple-choice
/// questions and null for free-form ones, the gold as text. init proposes `pid` as the id
/// and, since every gold read is the text of one of its options, `answer-kind = "text"`:
/// a gold "2" among the options "3", "0", "1", "2" is the option "2", not the position 2
/// (without it ingest refuses such a gold as naming two options). Its `question_type`
/// (multi_choice / free_form) only repeats the answer format, so the type proposed is
/// `metadata.task`. The multiple-choice questions are read with their gold's index, the
/// free-form ones as numbers.
#[test]
fn a_three_letter_id_and_choices_only_where_asked_are_proposed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut records = Vec::new();
    for i in 0..N {
        std::fs::write(d.join(format!("{}.png", i + 1)), png(image_of(i))).unwrap();
        let (choices, answer, kind) = if i.is_multiple_of(2) {
            let (_, _, ch, gold) = question(i);
            (serde_json::json!(ch), ch[gold].clone(), "multi_choice")
        } else {
            (serde_json::Value::Null, format!("{}", 3 * i), "free_form")
        };
        let task = ["geometry problem solving", "figure question answering", "math word problem"][i % 3];
        records.push(serde_json::json!({"pid": format!("{}", i + 1), "question": format!("What is shown in {i}?"),
            "image": format!("{}.png", i + 1), "choices": choices, "unit": null, "answer": answer,
            "question_type": kind, "metadata": {"task": task, "source": "Geometry3K", "img_width": 640}}));
    }
    std::fs::write(d.join("mathvista.json"), serde_json::to_string_pretty(&records).unwrap()).unwrap();
    // `question_type` only says whether a question has options: the type is the task.
    let (said, _) = init_proposes(
        d,
        &["mathvista.json"],
        "mathvista.toml",
        &["id = \"pid\"", "options = \"choices\"", "answer-kind = \"text\"", "question-type = \"metadata.task\""],
    );
    assert!(said.contains("question-type  <- \"metadata.task\" (a member of an object"), "{said}");
    let samples = read_as_proposed(d, "mathvista.toml");
    for s in &samples {
        let i = s.id.parse::<usize>().unwrap() - 1;
        let task = ["geometry problem solving", "figure question answering", "math word problem"][i % 3];
        assert_eq!(s.question_type.as_deref(), Some(task), "{}", s.id);
        if i.is_multiple_of(2) {
            let (_, _, ch, gold) = question(i);
            assert_eq!((&s.options, s.answer_index), (&ch, Some(gold as i32)), "{}", s.id);
        } else {
            assert!(s.options.is_empty() && s.answer == format!("{}", 3 * i), "{s:?}");
            assert_eq!(s.answer_format, blindspot::sample::AnswerFormat::Numeric, "{}", s.id);
        }
    }
}

/// An MMMU-style Parquet file: up to three images per question in `image_1` to
/// `image_3` (`{bytes, path}` structs, null where a question has fewer; `image_3` null
/// in every row), the options as list text, the gold's letter. init maps the image
/// columns as one run, the empty one too, and every question is read with its own
/// images.
#[test]
fn numbered_image_columns_are_proposed_as_one_run() {
    use arrow::buffer::NullBuffer;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let images_of = |i: usize| if i.is_multiple_of(3) { 2 } else { 1 };
    let image_column = |k: usize| {
        let present: Vec<bool> = (0..N).map(|i| images_of(i) > k).collect();
        let bytes: Vec<Vec<u8>> = (0..N).map(|i| if present[i] { png(image_of(i) + k) } else { Vec::new() }).collect();
        let fields = vec![Field::new("bytes", DataType::Binary, true), Field::new("path", DataType::Utf8, true)];
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(BinaryArray::from_iter_values(bytes.iter())),
            Arc::new(StringArray::from(vec![None::<&str>; N])),
        ];
        StructArray::try_new(fields.into(), arrays, Some(NullBuffer::from(present))).unwrap()
    };
    let mut columns: Vec<(String, ArrayRef)> = vec![
        ("id".into(), Arc::new(StringArray::from((0..N).map(|i| format!("validation_Art_{i}")).collect::<Vec<_>>()))),
        ("question".into(), Arc::new(StringArray::from((0..N).map(|i| question(i).1).collect::<Vec<_>>()))),
        (
            "options".into(),
            Arc::new(StringArray::from((0..N).map(|i| format!("{:?}", question(i).2)).collect::<Vec<_>>())),
        ),
    ];
    for k in 0..3 {
        columns.push((format!("image_{}", k + 1), Arc::new(image_column(k))));
    }
    columns.push((
        "answer".into(),
        Arc::new(StringArray::from((0..N).map(|i| LETTERS[question(i).3]).collect::<Vec<_>>())),
    ));
    let schema =
        Schema::new(columns.iter().map(|(n, a)| Field::new(n, a.data_type().clone(), true)).collect::<Vec<_>>());
    let batch = RecordBatch::try_new(Arc::new(schema), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let file = std::fs::File::create(d.join("mmmu.parquet")).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    init_proposes(
        d,
        &["mmmu.parquet"],
        "mmmu.toml",
        &["images = [\"image_1\", \"image_2\", \"image_3\"]", "answer-kind = \"letter\"", "group-by = \"image\""],
    );
    let samples = read_as_proposed(d, "mmmu.toml");
    for s in &samples {
        let i: usize = s.id["validation_Art_".len()..].parse().unwrap();
        let (_, _, ch, gold) = question(i);
        assert_eq!((&s.options, s.answer_index), (&ch, Some(gold as i32)), "{}", s.id);
        assert_eq!(s.images.len(), images_of(i), "{}", s.id);
    }
}

/// A TextVQA-style JSON object: the records under `data`, ten annotators' answers in
/// `answers` (no options), a unique `image_id` beside `question_id`. init takes
/// `question_id` as the id (an image's id names the picture), `answers` as the answer
/// and writes `reference-answers = "majority"`: the gold is the most common answer (ties:
/// the first given), and the whole list is kept in meta.
#[test]
fn reference_answers_are_read_as_their_most_common() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let answers = |i: usize| -> (Vec<&str>, &str) {
        match i % 3 {
            0 => (vec!["stop", "stop sign", "stop sign", "stop", "stop sign"], "stop sign"),
            1 => (vec!["5", "five", "five", "5"], "5"),
            _ => (vec!["coca cola"], "coca cola"),
        }
    };
    let data: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            serde_json::json!({"question": format!("what does sign {i} say?"), "image_id": format!("{i:016x}"),
                "image_classes": ["Sign", "Street"], "question_id": 34000 + i, "answers": answers(i).0})
        })
        .collect();
    let whole = serde_json::json!({"dataset_type": "val", "dataset_name": "textvqa", "data": data});
    std::fs::write(d.join("textvqa.json"), whole.to_string()).unwrap();
    init_proposes(
        d,
        &["textvqa.json"],
        "textvqa.toml",
        &["id = \"question_id\"", "answer = \"answers\"", "reference-answers = \"majority\""],
    );
    let samples = read_as_proposed(d, "textvqa.toml");
    for s in &samples {
        let i = s.id.parse::<usize>().unwrap() - 34000;
        let (list, gold) = answers(i);
        assert_eq!(s.answer, gold, "{}", s.id);
        assert_eq!(s.meta.get("answers"), Some(&serde_json::to_string(&list).unwrap()), "{}", s.id);
    }
    // Without the setting, a list answer is an error that names it.
    let toml = std::fs::read_to_string(d.join("textvqa.toml")).unwrap();
    std::fs::write(d.join("unset.toml"), toml.replace("reference-answers = \"majority\"", "")).unwrap();
    let o = run(d, &["ingest", "unset.toml", "-o", "out.parquet"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("the answer is a list of 5 values") && err.contains("reference-answers = \"majority\""),
        "{err}"
    );
    assert!(!d.join("out.parquet").exists());
    // A model answering "stop", "five" and "coca cola". Against the gold alone: "stop" is
    // not "stop sign" (0, 14 questions), "five" is the number 5 (1, 13), "coca cola" is
    // the gold (1, 13).
    ok(d, &["ingest", "textvqa.toml", "-o", "s.parquet"]);
    let preds: String = (0..N)
        .map(|i| {
            let said = ["stop", "five", "coca cola"][i % 3];
            format!("{}\n", serde_json::json!({"id": (34000 + i).to_string(), "response": said}))
        })
        .collect();
    std::fs::write(d.join("preds.jsonl"), preds).unwrap();
    let accuracy = |extra: &[&str], out: &str| {
        let o = ok(
            d,
            &[&["metrics", "--samples", "s.parquet", "--predictions", "m=preds.jsonl", "-o", out], extra].concat(),
        );
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join(out).join("metrics.json")).unwrap()).unwrap();
        (m["models"]["m"]["conditions"]["original"]["accuracy"].as_f64().unwrap(), m, stdout(&o))
    };
    let (gold_only, m, _) = accuracy(&[], "plain");
    assert!(m["import"].get("reference_answers").is_none());
    assert!((gold_only - 26.0 / 40.0).abs() < 1e-6, "{gold_only}");
    // By VQA accuracy: "stop" is 2 of the 5 references, left out in turn
    // (2·1/3 + 3·2/3)/5 = 8/15; "five" is all 4 ("5" and "five" alike), 3 of 3 left: 1;
    // "coca cola" is the one reference: 1.
    let (vqa, m, said) = accuracy(&["--reference-answers", "answers"], "vqa");
    let want = (14.0 * 8.0 / 15.0 + 13.0 + 13.0) / 40.0;
    assert!((vqa - want).abs() < 1e-6, "{vqa}, want {want}");
    assert_eq!(m["import"]["reference_answers"]["scored"], N);
    assert!(m["definitions"]["accuracy"].as_str().unwrap().contains("VQA accuracy"));
    assert!(said.contains("scored by VQA accuracy over the reference answers in meta \"answers\""), "{said}");
}

/// A VizWiz-style JSON list: each annotator's answer an object (`{"answer_confidence":
/// "yes", "answer": "..."}`) in `answers`, with `answer_type` and `answerable` beside it.
/// init proposes `answers` with `reference-answers = "majority"`; the gold is the most
/// common `answer`, and the annotators' objects are kept whole in meta.
#[test]
fn annotator_objects_are_read_as_reference_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let said = |i: usize| if i.is_multiple_of(2) { ["unanswerable", "soup", "soup"] } else { ["blue", "blue", "navy"] };
    let records: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            std::fs::write(d.join(format!("VizWiz_val_{i:08}.png")), png(image_of(i))).unwrap();
            let answers: Vec<serde_json::Value> =
                said(i).iter().map(|a| serde_json::json!({"answer_confidence": "yes", "answer": a})).collect();
            serde_json::json!({"image": format!("VizWiz_val_{i:08}.png"), "question": format!("What is this {i}?"),
                "answers": answers, "answer_type": "other", "answerable": 1})
        })
        .collect();
    std::fs::write(d.join("vizwiz.json"), serde_json::to_string_pretty(&records).unwrap()).unwrap();
    let o = ok(d, &["init", "vizwiz.json", "--field", "id=_row"]);
    let toml = std::fs::read_to_string(d.join("vizwiz.toml")).unwrap();
    for line in ["answer = \"answers\"", "reference-answers = \"majority\"", "images = \"image\""] {
        assert!(toml.lines().any(|l| l.starts_with(line)), "no line {line:?} in\n{toml}\n{}", stdout(&o));
    }
    for s in &read_as_proposed(d, "vizwiz.toml") {
        let i = s.id.parse::<usize>().unwrap() - 1;
        assert_eq!(s.answer, if i.is_multiple_of(2) { "soup" } else { "blue" }, "{}", s.id);
        let kept: serde_json::Value = serde_json::from_str(&s.meta["answers"]).unwrap();
        assert_eq!(kept[2]["answer"], said(i)[2], "{}", s.id);
    }
}

/// An MME-style `.txt`: tab-separated `image<TAB>question<TAB>answer` lines, no header
/// row. It is read as a TSV; init proposes `header = false` with the columns named in
/// order (its first row reads as a record: an image file name), so no question is lost;
/// named as a designer names them, every question is read. A `.txt` of prose is no table.
#[test]
fn a_headerless_tab_separated_txt_is_proposed_with_named_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::new();
    for i in 0..N {
        std::fs::write(d.join(format!("{i:012}.png")), png(image_of(i))).unwrap();
        let answer = if i.is_multiple_of(3) { "Yes" } else { "No" };
        text.push_str(&format!("{i:012}.png\tIs there a dog in picture {i}? Please answer yes or no.\t{answer}\n"));
    }
    std::fs::write(d.join("existence.txt"), text).unwrap();
    let (said, toml) = init_proposes(
        d,
        &["existence.txt"],
        "existence.toml",
        &[
            "header = false",
            "columns = [\"column_1\", \"column_2\", \"column_3\"]",
            "images = \"column_1\"",
            "id = \"_row\"",
        ],
    );
    assert!(said.contains(&format!("({N} records read, 3 fields)")), "{said}");
    let named = toml
        .replace(
            "columns = [\"column_1\", \"column_2\", \"column_3\"]",
            "columns = [\"image\", \"question\", \"answer\"]",
        )
        .replace("images = \"column_1\"", "images = \"image\"");
    std::fs::write(d.join("named.toml"), named).unwrap();
    for s in &read_as_proposed(d, "named.toml") {
        let i = s.id.parse::<usize>().unwrap() - 1;
        assert_eq!(s.question, format!("Is there a dog in picture {i}? Please answer yes or no."), "{}", s.id);
        assert_eq!(s.answer, if i.is_multiple_of(3) { "yes" } else { "no" }, "{}", s.id);
    }
    std::fs::write(d.join("notes.txt"), "Some notes\tabout the set.\nNo tabs here.\n").unwrap();
    let o = run(d, &["init", "notes.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot tell the file's format from its name"), "{}", stderr(&o));
}

/// The ingest note that counts records whose field `field` holds more than the
/// mapping reads from it, and how many records it counts (0: no such note).
fn read_in_part(ingested: &blindspot::ingest::Ingested, field: &str) -> usize {
    let start = format!("field \"{field}\" is read in part");
    ingested.stats.notes.iter().filter(|n| n.what.starts_with(&start)).map(|n| n.rows).sum()
}

/// LLaVA's evaluation layout: `conversations` of `{"from": "human"|"gpt", "value": ...}`
/// turns, the options written into the asking turn (`A. ...` lines after an `<image>`
/// placeholder) and a letter as the answering turn; every tenth record goes on with a
/// follow-up exchange. init proposes the first exchange's turns by path, with
/// `options-in-question` and `answer-kind = "letter"`; read as proposed, every question
/// has its options and gold, and the follow-ups ingest does not keep are counted. A
/// conversation is never proposed as the options.
#[test]
fn a_conversation_is_proposed_as_its_first_exchange() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let records: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            let (_, q, ch, gold) = question(i);
            let lettered: Vec<String> = ch.iter().enumerate().map(|(j, c)| format!("{}. {c}", LETTERS[j])).collect();
            let mut turns = vec![
                serde_json::json!({"from": "human", "value": format!("<image>\n{q}\n{}", lettered.join("\n"))}),
                serde_json::json!({"from": "gpt", "value": LETTERS[gold]}),
            ];
            if i.is_multiple_of(10) {
                turns.push(serde_json::json!({"from": "human", "value": "Why?"}));
                turns.push(serde_json::json!({"from": "gpt", "value": "Count them."}));
            }
            std::fs::write(d.join(format!("{i}.png")), png(image_of(i))).unwrap();
            serde_json::json!({"id": i.to_string(), "image": format!("{i}.png"), "conversations": turns})
        })
        .collect();
    std::fs::write(d.join("llava_test.json"), serde_json::to_string_pretty(&records).unwrap()).unwrap();
    let (said, toml) = init_proposes(
        d,
        &["llava_test.json", "-o", "llava_test.toml"],
        "llava_test.toml",
        &[
            "question = \"conversations.0.value\"",
            "answer = \"conversations.1.value\"",
            "answer-kind = \"letter\"",
            "options-in-question = true",
            "images = \"image\"",
        ],
    );
    assert!(said.contains("4 of them go on after it"), "{said}");
    assert!(!toml.contains("meta = [\"conversations\"]"), "{toml}");
    reads_every_question(d, "llava_test.toml", |id| id.parse().unwrap());
    let ingested = common::ingest_pipeline(&d.join("llava_test.toml"));
    assert!(ingested.samples.iter().all(|s| !s.question.contains("<image>") && !s.question.contains("\nA. ")));
    assert_eq!(read_in_part(&ingested, "conversations"), N / 10);
    // Mapped as options by hand, the turns are refused, not read as four options.
    std::fs::write(
        d.join("as_options.toml"),
        toml.replace("options-in-question = true", "").replace("# options = ", "options = \"conversations\" #"),
    )
    .unwrap();
    let o = run(d, &["ingest", "as_options.toml", "-o", "out.parquet"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!d.join("out.parquet").exists());
}

/// A chat API's layout: `messages` of `{"role": ..., "content": ...}` with a system turn
/// first and a free-form answer. init proposes the user and assistant turns after it; the
/// system turn, which no canonical field holds, is counted in every record. The
/// `<image>` placeholder that opens each question is removed and counted; a numbered
/// reference (`<image 1>`) is part of the question and stays.
#[test]
fn chat_messages_are_proposed_after_their_system_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::new();
    for i in 0..N {
        let (_, q, ch, gold) = question(i);
        let asked = format!("<image>\n{q}{}", if i == 0 { " See <image 1>." } else { "" });
        let rec = serde_json::json!({"uid": format!("m{i}"), "messages": [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": asked},
            {"role": "assistant", "content": ch[gold]}]});
        text.push_str(&format!("{rec}\n"));
    }
    std::fs::write(d.join("chat.jsonl"), text).unwrap();
    init_proposes(
        d,
        &["chat.jsonl"],
        "chat.toml",
        &["id = \"uid\"", "question = \"messages.1.content\"", "answer = \"messages.2.content\""],
    );
    let ingested = common::ingest_pipeline(&d.join("chat.toml"));
    assert_eq!(ingested.samples.len(), N);
    for s in &ingested.samples {
        let i: usize = s.id[1..].parse().unwrap();
        let (_, q, ch, gold) = question(i);
        let q = if i == 0 { format!("{q} See <image 1>.") } else { q };
        assert_eq!((&s.question, &s.answer), (&q, &ch[gold]), "{}", s.id);
    }
    assert_eq!(read_in_part(&ingested, "messages"), N);
    let placeholder = ingested.stats.notes.iter().find(|n| n.what.contains("\"<image>\" placeholder"));
    assert_eq!(placeholder.map(|n| n.rows), Some(N));
}

/// A Parquet file of the named columns, as `datasets` writes one (no Hub metadata).
fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// `{bytes, path}` image structs, null where `pictures` has none.
fn image_structs(pictures: &[Option<usize>]) -> ArrayRef {
    let bytes: Vec<Option<Vec<u8>>> = pictures.iter().map(|p| p.map(png)).collect();
    let fields = vec![Field::new("bytes", DataType::Binary, true), Field::new("path", DataType::Utf8, true)];
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(BinaryArray::from_iter(bytes.iter().map(|b| b.as_deref()))),
        Arc::new(StringArray::from(vec![None::<&str>; pictures.len()])),
    ];
    let nulls = arrow::buffer::NullBuffer::from(pictures.iter().map(Option::is_some).collect::<Vec<_>>());
    Arc::new(StructArray::try_new(fields.into(), arrays, Some(nulls)).unwrap())
}

/// Lists of texts, one list per row.
fn text_lists(rows: &[Vec<String>]) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for row in rows {
        for t in row {
            b.values().append_value(t);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// AI2D as lmms-lab publishes it: no id column, the options a list, the gold the
/// option's 0-based position written as text ("2"). init proposes the row number as
/// the id and `answer-kind = "index"`: half the questions offer digits, where a gold
/// "2" could also be read as the option whose text is "2", while the colour questions'
/// golds are no option's text, so positions are what the file means.
#[test]
fn a_file_without_ids_is_proposed_by_row_with_positions_written_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let rows: Vec<_> = (0..N).map(question).collect();
    write_parquet(
        &d.join("ai2d.parquet"),
        vec![
            ("question", Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.clone())))),
            ("options", text_lists(&rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>())),
            ("answer", Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.3.to_string())))),
            ("image", image_structs(&(0..N).map(|i| Some(image_of(i))).collect::<Vec<_>>())),
        ],
    );
    init_proposes(
        d,
        &["ai2d.parquet"],
        "ai2d.toml",
        &["id = \"_row\"", "options = \"options\"", "answer-kind = \"index\"", "images = \"image\""],
    );
    reads_every_question(d, "ai2d.toml", |id| id.parse::<usize>().unwrap() - 1);
}

/// BLINK's layout: `image_1` to `image_4`, the later ones null where a task shows fewer
/// pictures (here in every record read). The run is proposed whole, so a record further
/// on that fills `image_2` keeps it.
#[test]
fn a_numbered_image_run_is_proposed_whole_when_only_its_first_is_filled() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let rows: Vec<_> = (0..N).map(question).collect();
    let none = vec![None; N];
    write_parquet(
        &d.join("blink.parquet"),
        vec![
            ("idx", Arc::new(StringArray::from_iter_values((0..N).map(|i| format!("val_Counting_{i}"))))),
            ("question", Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.clone())))),
            ("image_1", image_structs(&(0..N).map(|i| Some(image_of(i))).collect::<Vec<_>>())),
            ("image_2", image_structs(&none)),
            ("image_3", image_structs(&none)),
            ("image_4", image_structs(&none)),
            ("choices", text_lists(&rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>())),
            ("answer", Arc::new(StringArray::from_iter_values(rows.iter().map(|r| format!("({})", LETTERS[r.3]))))),
        ],
    );
    init_proposes(
        d,
        &["blink.parquet"],
        "blink.toml",
        &["images = [\"image_1\", \"image_2\", \"image_3\", \"image_4\"]", "options = \"choices\""],
    );
    reads_every_question(d, "blink.toml", |id| id.trim_start_matches("val_Counting_").parse().unwrap());
}

/// VQA-RAD's layout: a JSON list whose `image_name` holds a bare file name, the files in
/// an `images` folder beside it. init finds them there and writes that folder, so the
/// proposal reads every image.
#[test]
fn images_in_a_folder_beside_the_data_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("images")).unwrap();
    let records: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            let (_, q, _, _) = question(i);
            std::fs::write(d.join(format!("images/synpic{}.png", image_of(i))), png(image_of(i))).unwrap();
            serde_json::json!({"qid": i, "image_name": format!("synpic{}.png", image_of(i)), "question": q,
                "answer": if i.is_multiple_of(2) { "yes" } else { "no" }})
        })
        .collect();
    std::fs::write(d.join("rad.json"), serde_json::to_string_pretty(&records).unwrap()).unwrap();
    init_proposes(d, &["rad.json"], "rad.toml", &["images = \"images\"", "images = \"image_name\""]);
    let samples = read_as_proposed(d, "rad.toml");
    assert!(samples.iter().all(|s| s.images.len() == 1 && s.images[0].sha256.is_some()));
}

/// No field names a question alone: `set_id` and `question_id` repeat across the
/// `category` values (HallusionBench's layout). init proposes the id made of them with
/// the category before, in the file's order; read as proposed, every id is distinct.
#[test]
fn an_id_made_of_several_fields_is_proposed_where_none_is_distinct() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let records: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            let (_, q, _, _) = question(i);
            let (category, gold) = (["VD", "VS"][i % 2], ["yes", "no"][i % 3 % 2]);
            serde_json::json!({"category": category, "set_id": (i / 2) % 5, "question_id": i / 10,
                "question": q, "gt_answer": gold})
        })
        .collect();
    std::fs::write(d.join("hb.json"), serde_json::to_string(&records).unwrap()).unwrap();
    let (said, _) =
        init_proposes(d, &["hb.json", "-o", "hb.toml"], "hb.toml", &["id = \"{category}-{set_id}-{question_id}\""]);
    assert!(said.contains("together \"category\", \"set_id\" and \"question_id\" are distinct"), "{said}");
    let samples = read_as_proposed(d, "hb.toml");
    let ids: std::collections::BTreeSet<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), N);
    assert!(ids.contains("VS-0-0") && ids.contains("VD-4-3"), "{ids:?}");
}

/// VSR's layout: a caption to judge true (1) or false (0), the validators' ids as list
/// text. The id lists are no options, and the 0/1 golds get the yes/no reading written
/// commented, for the designer to choose.
#[test]
fn id_lists_are_no_options_and_binary_golds_are_left_to_choose() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut text = String::new();
    for i in 0..N {
        let relation = ["on", "under"][i % 2];
        let rec = serde_json::json!({"image": format!("{i:012}.jpg"), "caption": format!("The cat {i} is on the bed."),
            "label": i % 2, "relation": relation, "annotator_id": i % 7,
            "vote_true_validator_id": "[2, 9]", "vote_false_validator_id": "[3]"});
        text.push_str(&format!("{rec}\n"));
    }
    std::fs::write(d.join("test.jsonl"), text).unwrap();
    let (said, toml) = init_proposes(
        d,
        &["test.jsonl", "-o", "vsr.toml"],
        "vsr.toml",
        &["answer = \"label\"", "# answer-format = ", "# [ingest.answer-map]", "# \"1\" = \"yes\""],
    );
    assert!(said.contains("options           not mapped: no field is"), "{said}");
    assert!(!toml.contains("options = \"vote"), "{toml}");
}

/// MMVP's layout: a CSV whose `Options` cell holds the options as one text with
/// lower-case labels (`(a) red (b) green`), the gold given as a label (`(b)`), and each
/// question's picture in a folder named like images (`MMVP Images/{Index}.jpg`) that no
/// field names. init proposes the options text, the image file template and its
/// folder; read as proposed, every question keeps its options and gold.
#[test]
fn lettered_options_in_one_text_and_images_named_by_the_id_are_proposed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("MMVP Images")).unwrap();
    let mut csv = String::from("Index,Question,Options,Correct Answer\n");
    for i in 0..N {
        let (_, q, ch, gold) = question(i);
        let labelled: Vec<String> =
            ch.iter().enumerate().map(|(k, o)| format!("({}) {o}", (b'a' + k as u8) as char)).collect();
        csv.push_str(&format!("{},{q},{},({})\n", i + 1, labelled.join(" "), (b'a' + gold as u8) as char));
        std::fs::write(d.join(format!("MMVP Images/{}.jpg", i + 1)), png(image_of(i))).unwrap();
    }
    std::fs::write(d.join("Questions.csv"), csv).unwrap();
    init_proposes(
        d,
        &["Questions.csv", "-o", "mmvp.toml"],
        "mmvp.toml",
        &["options = \"Options\"", "images = \"{Index}.jpg\"", "images = \"MMVP Images\""],
    );
    reads_every_question(d, "mmvp.toml", |id| id.parse::<usize>().unwrap() - 1);
    let samples = read_as_proposed(d, "mmvp.toml");
    assert!(samples.iter().all(|s| s.images.len() == 1 && s.images[0].sha256.is_some()));
}

/// GQA's layout: an object keyed by question id whose `imageId` repeats, lists of
/// related questions' ids (`entailed`, `equivalent`) that never hold the answer, the
/// types in an object (`types.structural`, ...), images named `{imageId}.jpg` in an
/// `images` folder. init proposes the keys as ids, no list as the options, the image
/// template, and names the type members to choose between.
#[test]
fn id_lists_never_holding_the_answer_are_no_options_and_types_in_an_object_are_offered() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("images")).unwrap();
    let mut gqa = serde_json::Map::new();
    for i in 0..N {
        let (kind, q, _, _) = question(i);
        let id = format!("20{i:05}");
        let (answer, structural) = (["yes", "no"][i % 2], ["verify", "query"][i % 2]);
        std::fs::write(d.join(format!("images/n{}.jpg", image_of(i))), png(image_of(i))).unwrap();
        gqa.insert(
            id.clone(),
            serde_json::json!({"entailed": [format!("20{:05}", (i + 1) % N), format!("20{:05}", (i + 2) % N)],
                "equivalent": [id], "question": q, "imageId": format!("n{}", image_of(i)),
                "answer": answer, "fullAnswer": "Yes, it is.",
                "types": {"detailed": format!("{kind}{}", i % 3), "semantic": kind, "structural": structural}}),
        );
    }
    std::fs::write(d.join("gqa.json"), serde_json::to_string(&gqa).unwrap()).unwrap();
    let (said, _) = init_proposes(
        d,
        &["gqa.json", "-o", "gqa.toml"],
        "gqa.toml",
        &["id = \"_key\"", "images = \"{imageId}.jpg\"", "images = \"images\""],
    );
    let options = said.lines().find(|l| l.trim_start().starts_with("options ")).unwrap_or_default();
    assert!(options.contains("not mapped: no field is"), "{said}");
    assert!(
        said.contains("\"types.detailed\", \"types.semantic\" or \"types.structural\" could each be the question-type"),
        "{said}"
    );
    let samples = read_as_proposed(d, "gqa.toml");
    assert!(samples.iter().all(|s| s.options.is_empty() && s.images.len() == 1 && s.id.starts_with("20")));
}

/// OCRBench's layout: `answers` a list of accepted answers, or one answer as a lone text
/// in some records, and images under a folder named in the path. init proposes `answers`
/// with `reference-answers`; every gold is read, the lone ones too, and meta keeps each
/// record's references as a list. ChartQA's: the images in a `png` folder beside the
/// data, named by `imgname` alone; init finds that folder.
#[test]
fn a_lone_reference_among_lists_and_images_in_any_folder_beside_the_data_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("OCRBench_Images")).unwrap();
    let records: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            let (kind, q, _, _) = question(i);
            std::fs::write(d.join(format!("OCRBench_Images/{i}.png")), png(image_of(i))).unwrap();
            let word = format!("word{i}");
            let answers =
                if i % 4 == 0 { serde_json::json!(word) } else { serde_json::json!([word, word.to_uppercase()]) };
            serde_json::json!({"dataset_name": "IIIT5K", "id": i, "image_path": format!("./OCRBench_Images/{i}.png"),
                "question": q, "answers": answers, "type": kind})
        })
        .collect();
    std::fs::write(d.join("OCRBench.json"), serde_json::to_string(&records).unwrap()).unwrap();
    init_proposes(
        d,
        &["OCRBench.json"],
        "ocrbench.toml",
        &["answer = \"answers\"", "reference-answers = \"majority\""],
    );
    let samples = read_as_proposed(d, "ocrbench.toml");
    for s in &samples {
        let word = format!("word{}", s.id);
        assert_eq!(s.answer, word);
        let kept = s.meta.get("answers").map(String::as_str).unwrap_or_default();
        let want = if s.id.parse::<usize>().unwrap() % 4 == 0 {
            serde_json::json!([word])
        } else {
            serde_json::json!([word, word.to_uppercase()])
        };
        assert_eq!(serde_json::from_str::<serde_json::Value>(kept).unwrap(), want, "{}", s.id);
        assert!(s.images.len() == 1 && s.images[0].sha256.is_some(), "{}", s.id);
    }

    let chart = d.join("chartqa");
    std::fs::create_dir_all(chart.join("png")).unwrap();
    let records: Vec<serde_json::Value> = (0..N)
        .map(|i| {
            std::fs::write(chart.join(format!("png/{i}.png")), png(image_of(i))).unwrap();
            serde_json::json!({"imgname": format!("{i}.png"), "query": format!("What is bar {i}?"), "label": i * 3})
        })
        .collect();
    std::fs::write(chart.join("test_human.json"), serde_json::to_string(&records).unwrap()).unwrap();
    init_proposes(
        &chart,
        &["test_human.json", "-o", "test_human.toml"],
        "test_human.toml",
        &["images = \"png\"", "images = \"imgname\""],
    );
    let samples = read_as_proposed(&chart, "test_human.toml");
    assert!(samples.iter().all(|s| s.images.len() == 1 && s.images[0].sha256.is_some()));
}

/// VQA's layout (VQA v2, OK-VQA): the questions in one file (`{"questions": [...]}`) and
/// their annotations in another (`{"annotations": [...]}`: ten annotators' answers and
/// the question type), sharing `question_id`. `init --join` finds the key and proposes
/// `[[ingest.join]]`; read as proposed, every question has its majority gold and type.
/// Files at odds (another `image_id`), or a question without annotations, are errors
/// naming both places, with nothing written; annotations no question matched are counted.
#[test]
fn a_questions_file_and_its_annotations_file_are_joined() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let gold = |i: usize| ["two", "red", "yes"][i % 3];
    let questions: Vec<serde_json::Value> = (0..N)
        .map(|i| serde_json::json!({"image_id": 100 + i / 2, "question": question(i).1, "question_id": 5000 + i}))
        .collect();
    // One annotation more than there are questions: a question left out of the file.
    let annotations = |image_of: &dyn Fn(usize) -> usize| -> Vec<serde_json::Value> {
        (0..=N)
            .map(|i| {
                let answers: Vec<serde_json::Value> = (0..10)
                    .map(|k| serde_json::json!({"answer": if k < 6 { gold(i) } else { "other" }, "answer_id": k + 1}))
                    .collect();
                let kind = ["how many", "what color is the", "is the"][i % 3];
                serde_json::json!({"question_id": 5000 + i, "image_id": image_of(i), "answers": answers,
                    "question_type": kind, "answer_type": "other"})
            })
            .collect()
    };
    let write = |name: &str, member: &str, records: Vec<serde_json::Value>| {
        let mut whole = serde_json::json!({"info": {}, "data_subtype": "val2014"});
        whole[member] = serde_json::Value::Array(records);
        std::fs::write(d.join(name), whole.to_string()).unwrap();
    };
    write("questions.json", "questions", questions);
    write("annotations.json", "annotations", annotations(&|i| 100 + i / 2));
    // COCO's images, named by the image id with leading zeros.
    std::fs::create_dir(d.join("val2014")).unwrap();
    for i in 0..N {
        std::fs::write(d.join(format!("val2014/COCO_val2014_{:012}.jpg", 100 + i / 2)), png(image_of(i / 2))).unwrap();
    }
    let (said, _) = init_proposes(
        d,
        &["questions.json", "--join", "annotations.json", "-o", "vqa.toml"],
        "vqa.toml",
        &[
            "path = \"annotations.json\"",
            "on = \"question_id\"",
            "answer = \"answers\"",
            "question-type = \"question_type\"",
            "images = \"val2014\"",
            "images = \"COCO_val2014_{image_id:012}.jpg\"",
        ],
    );
    assert!(said.contains(&format!("{N} of the {N} questions read have theirs")), "{said}");
    let o = ok(d, &["ingest", "vqa.toml", "-o", "joined.parquet"]);
    assert!(stderr(&o).contains("1 row: records of the joined file annotations.json that no question matched"));
    assert!(stderr(&o).contains("joined file annotations.json: read from the array \"annotations\""));
    let samples = read_as_proposed(d, "vqa.toml");
    for s in &samples {
        let i = s.id.parse::<usize>().unwrap() - 5000;
        assert_eq!((s.answer.as_str(), s.question.as_str()), (gold(i), question(i).1.as_str()), "{}", s.id);
        assert_eq!(s.question_type.as_deref(), Some(["how many", "what color is the", "is the"][i % 3]));
        assert_eq!(s.images.len(), 1, "{}", s.id);
        assert_eq!(s.images[0].path.as_deref(), Some(format!("COCO_val2014_{:012}.jpg", 100 + i / 2).as_str()));
    }
    // Zero padding applies to whole numbers only: a text in its place is an error.
    let toml = std::fs::read_to_string(d.join("vqa.toml")).unwrap();
    std::fs::write(d.join("padded.toml"), toml.replace("{image_id:012}", "{question:012}")).unwrap();
    let o = run(d, &["ingest", "padded.toml", "-o", "padded.parquet"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a whole number to write with 12 digits"), "{}", stderr(&o));

    // The files at odds on one question's image: an error naming the field, both files
    // and the key; nothing written.
    write("annotations.json", "annotations", annotations(&|i| if i == 7 { 999 } else { 100 + i / 2 }));
    let o = run(d, &["ingest", "vqa.toml", "-o", "odd.parquet"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("field \"image_id\": is \"103\" here but \"999\" in annotations.json")
            && err.contains("(joined on \"question_id\" = \"5007\")"),
        "{err}"
    );
    assert!(!d.join("odd.parquet").exists());
    // A question whose annotations are missing.
    let mut fewer = annotations(&|i| 100 + i / 2);
    fewer.remove(3);
    write("annotations.json", "annotations", fewer);
    let o = run(d, &["ingest", "vqa.toml", "-o", "odd.parquet"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no record of annotations.json has \"question_id\" = \"5003\""), "{}", stderr(&o));
    assert!(!d.join("odd.parquet").exists());
    // A joined file holding two arrays of records (a COCO-style `categories` beside the
    // annotations) is read from the one `records` names.
    let mut whole = serde_json::json!({"categories": [{"id": 1}, {"id": 2}]});
    whole["annotations"] = serde_json::Value::Array(annotations(&|i| 100 + i / 2));
    std::fs::write(d.join("annotations.json"), whole.to_string()).unwrap();
    assert_eq!(run(d, &["ingest", "vqa.toml", "-o", "two.parquet"]).status.code(), Some(1));
    let toml = std::fs::read_to_string(d.join("vqa.toml")).unwrap();
    let named = toml.replacen("on = \"question_id\"", "on = \"question_id\"\nrecords = \"annotations\"", 1);
    std::fs::write(d.join("vqa.toml"), named).unwrap();
    ok(d, &["ingest", "vqa.toml", "-o", "two.parquet"]);
}
