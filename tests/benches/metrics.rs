//! `just bench-metrics` / `cargo bench --bench metrics`: the metrics stage on
//! 10 models × 10 conditions × 5,000 questions (500,000 free-text
//! predictions), scoring plus 1,000 bootstrap resamples per cell and every
//! derived metric (goal < 5 s on this machine's threads). Prints figures;
//! asserts nothing (speed is measured here, never in tests).

#[path = "support.rs"]
mod support;

use support::best_of;

use blindspot::error::Location;
use blindspot::metrics::{MetricsConfig, compute, score_all};
use blindspot::predictions::{Prediction, Response};
use blindspot::sample::{AnswerFormat, Sample};

const QUESTIONS: usize = 5000;
const MODELS: usize = 10;
const CONDITIONS: [&str; 10] = [
    "",
    "no_image",
    "white_image",
    "noise_image",
    "caption",
    "mirage",
    "guess",
    "option_shuffle",
    "unknown_option",
    "gold_removed",
];

fn main() {
    let mut rows = Vec::new();
    for i in 0..QUESTIONS {
        let mut s = Sample::new(format!("q{i}"), format!("Which option fits question {i}?"), "");
        s.answer_format = AnswerFormat::MultipleChoice;
        s.options = (0..4).map(|j| format!("option {j} of {i}")).collect();
        s.answer_index = Some((i % 4) as i32);
        s.answer = s.options[i % 4].clone();
        // Trap kinds need their own rows (their gold may move); the others are scored against the parent.
        for kind in &CONDITIONS[7..] {
            let mut v = s.clone();
            v.id = format!("q{i}::{kind}");
            v.parent_id = Some(s.id.clone());
            v.variant = Some(kind.to_string());
            rows.push(v);
        }
        rows.push(s);
    }
    let loc = Location::line("bench.jsonl", 1);
    let mut preds = Vec::with_capacity(MODELS * CONDITIONS.len() * QUESTIONS);
    for m in 0..MODELS {
        for (c, cond) in CONDITIONS.iter().enumerate() {
            for i in 0..QUESTIONS {
                let id = if cond.is_empty() { format!("q{i}") } else { format!("q{i}::{cond}") };
                // A mix of real-looking replies: letters, markers, option text, abstentions.
                let pick = (i * 7 + m * 3 + c) % 5;
                let text = match pick {
                    0 => format!("The answer is {}.", (b'A' + (i % 4) as u8) as char),
                    1 => format!("[[{}]]", (b'A' + ((i + m) % 4) as u8) as char),
                    2 => format!("option {} of {i}", (i + c) % 4),
                    3 => "I cannot see the image, so I cannot answer this question.".to_string(),
                    _ => format!("({})", (b'A' + ((i + 1) % 4) as u8) as char),
                };
                preds.push(Prediction {
                    model: format!("model-{m}"),
                    id,
                    response: Response::Text(text),
                    loc: loc.clone(),
                });
            }
        }
    }
    let cfg = MetricsConfig::default();
    let threads = rayon::current_num_threads();
    let (secs, report) = best_of(3, || {
        let scored = score_all(&rows, &preds, &cfg).expect("scores");
        compute(&rows, scored, &cfg)
    });
    let cells: usize = report.cells.values().map(|c| c.len()).sum();
    println!(
        "metrics: {MODELS} models x {} conditions x {QUESTIONS} questions ({} predictions, {cells} cells, {} bootstrap resamples each), {threads} threads: {secs:.2} s (goal < 5 s)",
        CONDITIONS.len(),
        preds.len(),
        cfg.resamples
    );
    let scored = score_all(&rows, &preds, &cfg).expect("scores");
    let (secs, _) = best_of(3, || score_all(&rows, &preds, &cfg).expect("scores"));
    println!("  of which scoring (resolve ids, parse, abstention): {secs:.2} s");
    let (secs, _) = best_of(3, || compute(&rows, scored.clone(), &cfg));
    println!("  of which aggregation (bootstrap CIs, derived metrics): {secs:.2} s");
}
