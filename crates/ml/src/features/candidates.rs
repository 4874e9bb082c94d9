//! Multiple choice without positions: each option of a question becomes a row (a
//! *candidate*) and the forest learns "is this option the gold", so a shortcut such as
//! "the gold is the longest option" is one split on one column instead of one per
//! letter.
//!
//! ```text
//! per-question matrix (q.*, opt0.x, opt1.x, …, template.opt0.p_gold, …)
//!   ──▶ CandidateLayout::expand ──▶ one row per (question, option j):
//!         q.*, …                 the question's own columns, repeated
//!         opt.position           j (the letter: gold-letter imbalance stays learnable)
//!         opt.x                  the value of opt{j}.x
//!         opt.x.rank, opt.x.gap  relative to the question's other options: how many
//!                                have a strictly higher value, and this value minus
//!                                the highest of the others
//! ```
//!
//! The layout is derived from the column names alone: a name with a part `opt{j}` is
//! the position-`j` column of the family named with that part as `opt`. So every
//! option column the featurizer makes (recipes and key statistics included) becomes a
//! candidate column, and nothing here reads an answer: expanding a held-out matrix is
//! as answer-free as the matrix.

use super::Matrix;

/// Column stats whose relative columns add nothing: already ranks or flags of a rank.
const NOT_RELATIVE: &[&str] = &["len_rank", "is_longest", "is_shortest", "is_mode"];

/// One option family: its candidate name and its per-position columns.
#[derive(Debug, Clone)]
struct OptionFamily {
    name: String,
    /// Per option position j, the per-question column holding position j's value.
    positions: Vec<usize>,
    relative: bool,
}

/// How per-question columns become candidate columns; see the module docs.
#[derive(Debug, Clone)]
pub struct CandidateLayout {
    question: Vec<usize>,
    families: Vec<OptionFamily>,
    names: Vec<String>,
}

/// The option position a name part stands for (`opt3` → 3).
fn position(part: &str) -> Option<usize> {
    let digits = part.strip_prefix("opt")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok())?
}

impl CandidateLayout {
    /// The layout of a featurizer's columns `names`.
    pub fn of(names: &[String]) -> CandidateLayout {
        let mut question = Vec::new();
        let mut families: Vec<OptionFamily> = Vec::new();
        for (c, name) in names.iter().enumerate() {
            let parts: Vec<&str> = name.split('.').collect();
            let Some((at, j)) = parts.iter().enumerate().find_map(|(i, p)| Some((i, position(p)?))) else {
                question.push(c);
                continue;
            };
            let mut family_parts = parts.clone();
            family_parts[at] = "opt";
            let family = family_parts.join(".");
            let index = match families.iter().position(|f| f.name == family) {
                Some(i) => i,
                None => {
                    let stat = parts.last().copied().unwrap_or_default();
                    families.push(OptionFamily {
                        name: family,
                        positions: Vec::new(),
                        relative: !NOT_RELATIVE.contains(&stat),
                    });
                    families.len() - 1
                }
            };
            let f = &mut families[index];
            if f.positions.len() <= j {
                f.positions.resize(j + 1, usize::MAX);
            }
            f.positions[j] = c;
        }
        let mut out = question.iter().map(|&c| names[c].clone()).collect::<Vec<_>>();
        out.push("opt.position".to_string());
        for f in &families {
            out.push(f.name.clone());
            if f.relative {
                out.push(format!("{}.rank", f.name));
                out.push(format!("{}.gap", f.name));
            }
        }
        CandidateLayout { question, families, names: out }
    }

    /// Candidate column names, one per column of [`CandidateLayout::expand`]'s matrix.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// One row per option of every question of `x` (`n_options[i]` options for row
    /// `i`), questions in order and options in order within each.
    pub fn expand(&self, x: &Matrix, n_options: &[usize]) -> Matrix {
        assert_eq!(x.n_rows(), n_options.len(), "one option count per question");
        let width = self.names.len();
        let total: usize = n_options.iter().sum();
        let mut data = vec![f64::NAN; total * width];
        let mut at = 0;
        let mut values: Vec<f64> = Vec::new();
        for (i, &k) in n_options.iter().enumerate() {
            let row = x.row(i);
            let block = &mut data[at * width..(at + k) * width];
            for (j, out) in block.chunks_mut(width).enumerate() {
                for (c, &q) in self.question.iter().enumerate() {
                    out[c] = row[q];
                }
                out[self.question.len()] = j as f64;
            }
            // Each family's values once per question, then every option's columns.
            let mut c = self.question.len() + 1;
            for f in &self.families {
                values.clear();
                values.extend(
                    (0..k).map(|o| f.positions.get(o).filter(|&&p| p != usize::MAX).map_or(f64::NAN, |&p| row[p])),
                );
                for (j, out) in block.chunks_mut(width).enumerate() {
                    out[c] = values[j];
                    if f.relative {
                        let (rank, gap) = relative(&values, j);
                        out[c + 1] = rank;
                        out[c + 2] = gap;
                    }
                }
                c += if f.relative { 3 } else { 1 };
            }
            at += k;
        }
        Matrix::new(total, width, data)
    }
}

/// Option `j`'s rank among `values` (how many are strictly higher) and its value minus
/// the highest of the others; NaN where the value is missing or no other is present.
fn relative(values: &[f64], j: usize) -> (f64, f64) {
    let own = values[j];
    if own.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    let others = values.iter().enumerate().filter(|&(o, v)| o != j && !v.is_nan()).map(|(_, &v)| v);
    let (higher, best) =
        others.fold((0usize, f64::NEG_INFINITY), |(h, best), v| (h + usize::from(v > own), best.max(v)));
    (higher as f64, if best == f64::NEG_INFINITY { f64::NAN } else { own - best })
}

/// The concept a candidate column belongs to, so that importances speak of one
/// shortcut once: a family's relative columns (`.rank`, `.gap`) are the family, and the
/// length columns (`opt.chars`, `opt.len_rank`, `opt.is_longest`, `opt.is_shortest`,
/// `opt.len_ratio`) are `opt.length`.
pub fn concept(name: &str) -> String {
    let base = name.strip_suffix(".rank").or_else(|| name.strip_suffix(".gap")).unwrap_or(name);
    let base = if base.split('.').any(|p| p == "opt") { base } else { name };
    match base {
        "opt.chars" | "opt.len_rank" | "opt.is_longest" | "opt.is_shortest" | "opt.len_ratio" => {
            "opt.length".to_string()
        }
        "opt.term_gold_max" => "opt.term_gold".to_string(),
        _ => base.to_string(),
    }
}

/// The family whose values stand for a concept when its shortcut is put in words.
fn concept_family(concept: &str) -> &str {
    if concept == "opt.length" { "opt.chars" } else { concept }
}

/// How the gold option sits among its question's options on one family, over held-out
/// questions: see [`extreme_shares`]. Sums, so folds and repeats add up.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExtremeTally {
    /// Questions where the family separates the options.
    pub n: usize,
    /// Of those, questions whose gold holds the highest / the lowest value.
    pub gold_highest: usize,
    pub gold_lowest: usize,
    /// The expected count for a random option instead of the gold.
    pub random_highest: f64,
    pub random_lowest: f64,
}

impl ExtremeTally {
    pub fn add(&mut self, other: &ExtremeTally) {
        self.n += other.n;
        self.gold_highest += other.gold_highest;
        self.gold_lowest += other.gold_lowest;
        self.random_highest += other.random_highest;
        self.random_lowest += other.random_lowest;
    }

    /// The direction in which the gold stands out most against a random option, with
    /// (gold share, random-option share); `None` without questions.
    pub fn strongest(&self) -> Option<(Extreme, f64, f64)> {
        if self.n == 0 {
            return None;
        }
        let n = self.n as f64;
        let high = (Extreme::Highest, self.gold_highest as f64 / n, self.random_highest / n);
        let low = (Extreme::Lowest, self.gold_lowest as f64 / n, self.random_lowest / n);
        Some(if high.1 - high.2 >= low.1 - low.2 { high } else { low })
    }
}

impl CandidateLayout {
    /// Per option family (by name), how the gold sits among the options of the
    /// questions of `c`, a matrix [`CandidateLayout::expand`] made with `n_options`;
    /// `gold[i]` is question i's gold position.
    pub fn tally(&self, c: &Matrix, n_options: &[usize], gold: &[Option<usize>]) -> Vec<(String, ExtremeTally)> {
        let q = self.question.len() + 1;
        let mut col = q;
        let mut out = Vec::with_capacity(self.families.len());
        for f in &self.families {
            let mut t = ExtremeTally::default();
            let mut at = 0;
            for (&k, g) in n_options.iter().zip(gold) {
                let values: Vec<f64> = (0..k).map(|j| c.get(at + j, col)).collect();
                at += k;
                if let Some(e) = g.and_then(|g| extremes(&values, g)) {
                    t.n += 1;
                    t.gold_highest += usize::from(e.0);
                    t.gold_lowest += usize::from(e.1);
                    t.random_highest += e.2;
                    t.random_lowest += e.3;
                }
            }
            out.push((f.name.clone(), t));
            col += if f.relative { 3 } else { 1 };
        }
        out
    }
}

/// A shortcut in words: `concept`'s strongest direction as a sentence about the gold
/// (`"the gold is the longest option"`), from the tallies of a group.
pub fn shortcut_sentence(concept: &str, tallies: &[(String, ExtremeTally)]) -> Option<(String, f64, f64, usize)> {
    let family = concept_family(concept);
    let (_, tally) = tallies.iter().find(|(name, _)| name == family)?;
    let (extreme, gold, random) = tally.strongest()?;
    let high = extreme == Extreme::Highest;
    let stat = family.rsplit('.').next().unwrap_or(family);
    let key = family.split('.').next().unwrap_or(family);
    let who = match key {
        "opt" => String::new(),
        "template" => "questions with the same template".into(),
        "question" => "questions with the same text".into(),
        k if k.starts_with("slot") => format!("questions with the same value in template {k}"),
        k => format!("questions with the same `{k}`"),
    };
    let sentence = match (key, stat, high) {
        ("opt", "chars", true) => "the gold is the longest option".to_string(),
        ("opt", "chars", false) => "the gold is the shortest option".to_string(),
        ("opt", "q_overlap", true) => "the gold shares the most words with the question".to_string(),
        ("opt", "q_overlap", false) => "the gold shares the fewest words with the question".to_string(),
        ("opt", "in_question", true) => "the gold's text appears in the question".to_string(),
        ("opt", "in_question", false) => "the gold's text is the one not in the question".to_string(),
        ("opt", "number", true) => "the gold holds the largest number".to_string(),
        ("opt", "number", false) => "the gold holds the smallest number".to_string(),
        ("opt", "gold_ratio" | "gold_count", true) => {
            "the gold's text was the gold answer most often in the training folds".to_string()
        }
        ("opt", "seen_count", true) => "the gold's text was offered most often in the training folds".to_string(),
        ("opt", "seen_count", false) => "the gold's text was offered least often in the training folds".to_string(),
        ("opt", "term_gold", true) => {
            "the gold carries the words most often on the gold side in the training folds".to_string()
        }
        ("opt", "position", _) => return None,
        (_, "p_gold" | "is_mode", true) if !who.is_empty() => {
            format!("the gold's text is the most common answer of the training {who}")
        }
        (_, "log_dist", false) if !who.is_empty() => {
            format!("the gold's number is the closest to the gold numbers of the training {who}")
        }
        _ => format!(
            "the gold has the {} value of `{family}` among its options",
            if high { "highest" } else { "lowest" }
        ),
    };
    Some((sentence, gold, random, tally.n))
}

/// Which way an option family reads as a shortcut: the gold holds the highest or the
/// lowest value among its question's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Extreme {
    Highest,
    Lowest,
}

/// How often the gold option is the extreme of a family among its question's options,
/// against how often a random option is: `(gold share, random-option share)` over the
/// questions where the family separates the options (not all equal, some present).
/// `values[i]` holds question i's per-option values, `gold[i]` its gold position.
pub fn extreme_shares(values: &[Vec<f64>], gold: &[usize], extreme: Extreme) -> (f64, f64, usize) {
    let (mut hits, mut random, mut n) = (0usize, 0.0, 0usize);
    for e in values.iter().zip(gold).filter_map(|(v, &g)| extremes(v, g)) {
        n += 1;
        let (hit, share) = if extreme == Extreme::Highest { (e.0, e.2) } else { (e.1, e.3) };
        hits += usize::from(hit);
        random += share;
    }
    let d = n.max(1) as f64;
    (hits as f64 / d, random / d, n)
}

/// Whether the gold (position `g`) holds the highest and the lowest of `values`, and
/// the chance that a random option does; `None` when the values do not separate the
/// options (fewer than two present, or all equal) or `g` is not an option.
fn extremes(values: &[f64], g: usize) -> Option<(bool, bool, f64, f64)> {
    let present = values.iter().copied().filter(|x| !x.is_nan());
    let (lo, hi, count) =
        present.fold((f64::INFINITY, f64::NEG_INFINITY, 0usize), |(l, h, c), x| (l.min(x), h.max(x), c + 1));
    if count < 2 || lo == hi || g >= values.len() {
        return None;
    }
    let k = values.len() as f64;
    let share = |best: f64| values.iter().filter(|&&x| x == best).count() as f64 / k;
    Some((values[g] == hi, values[g] == lo, share(hi), share(lo)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_columns_fold_into_one_family_with_relative_columns() {
        let names: Vec<String> =
            ["q.chars", "opt0.chars", "opt0.is_longest", "opt1.chars", "opt1.is_longest", "template.opt1.p_gold"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let layout = CandidateLayout::of(&names);
        assert_eq!(
            layout.names(),
            [
                "q.chars",
                "opt.position",
                "opt.chars",
                "opt.chars.rank",
                "opt.chars.gap",
                "opt.is_longest",
                "template.opt.p_gold",
                "template.opt.p_gold.rank",
                "template.opt.p_gold.gap"
            ]
        );
        // Two questions: 2 options and 3 options (the third has no columns: NaN).
        let x = Matrix::new(2, 6, vec![10.0, 3.0, 0.0, 5.0, 1.0, 0.5, 20.0, 7.0, 1.0, 2.0, 0.0, f64::NAN]);
        let c = layout.expand(&x, &[2, 3]);
        assert_eq!(c.n_rows(), 5);
        assert_eq!(c.row(0)[..6], [10.0, 0.0, 3.0, 1.0, -2.0, 0.0]);
        assert_eq!(c.row(1)[..6], [10.0, 1.0, 5.0, 0.0, 2.0, 1.0]);
        assert_eq!(c.row(2)[..6], [20.0, 0.0, 7.0, 0.0, 5.0, 1.0]);
        assert!(c.row(2)[6].is_nan() && c.row(4)[2].is_nan() && c.row(4)[3].is_nan());
        // Only position 1 has a template column: its rank is among no others.
        assert_eq!(c.row(1)[6..8], [0.5, 0.0]);
        assert!(c.row(1)[8].is_nan());
    }

    #[test]
    fn shares_compare_the_gold_with_a_random_option() {
        let values = vec![vec![1.0, 3.0, 2.0], vec![5.0, 5.0, 1.0], vec![2.0, 2.0, 2.0]];
        let (gold, random, n) = extreme_shares(&values, &[1, 0, 2], Extreme::Highest);
        assert_eq!(n, 2);
        assert!((gold - 1.0).abs() < 1e-12);
        assert!((random - (1.0 / 3.0 + 2.0 / 3.0) / 2.0).abs() < 1e-12);
    }
}
