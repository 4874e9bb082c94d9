//! Template and slot discovery, meta-field encoders and the text helpers
//! (tokens, numbers, overlap) the features are built from.

use super::*;

/// Template discovery, fit on training questions.
///
/// A token is *frame* when it occurs in at least `max(min_template_count,
/// frame_fraction * n)` training questions, otherwise *slot*; consecutive slot tokens
/// merge into one slot. Each line of a question gets a skeleton (frame tokens with
/// `<slot>` markers); a line whose skeleton occurs in fewer than `min_template_count`
/// questions (a passage, a list of names) becomes one slot as a whole, so a long
/// vignette does not make every question's template unique. A question's template is
/// its lines' skeletons; templates seen fewer than `min_template_count` times get no id.
/// An object name frequent enough to be frame ("person" in POPE) makes its questions a
/// template of their own, whose statistics then carry the object's prior.
///
/// The sets are only looked up, never iterated.
#[derive(Debug, Clone, Default)]
pub(super) struct Templates {
    pub(super) frame_tokens: FastSet<String>,
    pub(super) frame_lines: FastSet<String>,
    pub(super) ids: Vocab,
}

/// A question's template text and slot values (see [`Templates::template`]).
pub(super) type Shape = (String, Vec<String>);

/// Marks a slot in a skeleton; tokens never contain `<` next to letters, so no real
/// token equals it.
pub(super) const SLOT: &str = "<slot>";
/// Separates lines in a template or whole-question key; tokens never contain whitespace.
pub(super) const LINE_BREAK: &str = "\n";

impl Templates {
    /// The templates of `questions`, and each question's shape under them.
    pub(super) fn fit(questions: &[&[Vec<String>]], config: &FeatureConfig) -> (Templates, Vec<Shape>) {
        let min_count = config.min_template_count.max(1);
        let fraction_count = (config.frame_fraction * questions.len() as f64).ceil() as usize;
        let frame_tokens = frequent(
            questions.iter().map(|q| q.iter().flatten().map(String::as_str).collect()),
            min_count.max(fraction_count),
        );
        let mut templates =
            Templates { frame_tokens: frame_tokens.into_iter().map(str::to_string).collect(), ..Templates::default() };
        // Each line's skeleton is made once; the shapes below reuse them.
        let skeletons: Vec<Vec<(String, Vec<String>)>> =
            questions.par_iter().map(|q| q.iter().map(|line| templates.skeleton(line)).collect()).collect();
        let frame_lines = frequent(skeletons.iter().map(|q| q.iter().map(|(s, _)| s.as_str()).collect()), min_count);
        templates.frame_lines = frame_lines.into_iter().map(str::to_string).collect();
        let shapes: Vec<Shape> =
            questions.par_iter().zip(skeletons).map(|(q, skeletons)| templates.assemble(q, skeletons)).collect();
        let kept = frequent(shapes.iter().map(|(t, _)| vec![t.as_str()]), min_count);
        templates.ids = Vocab::new(kept.into_iter());
        (templates, shapes)
    }

    /// A line's skeleton and its slot values.
    pub(super) fn skeleton(&self, line: &[String]) -> (String, Vec<String>) {
        let mut parts: Vec<&str> = Vec::new();
        let mut slots: Vec<String> = Vec::new();
        let mut open: Vec<&str> = Vec::new();
        for t in line {
            if self.frame_tokens.contains(t) {
                if !open.is_empty() {
                    parts.push(SLOT);
                    slots.push(open.join(" "));
                    open.clear();
                }
                parts.push(t);
            } else {
                open.push(t);
            }
        }
        if !open.is_empty() {
            parts.push(SLOT);
            slots.push(open.join(" "));
        }
        (parts.join(" "), slots)
    }

    /// A question's template text and slot values.
    pub(super) fn template(&self, question: &[Vec<String>]) -> Shape {
        self.assemble(question, question.iter().map(|line| self.skeleton(line)).collect())
    }

    /// [`Templates::template`] of a question whose lines' skeletons are `skeletons`.
    pub(super) fn assemble(&self, question: &[Vec<String>], skeletons: Vec<(String, Vec<String>)>) -> Shape {
        let mut parts: Vec<String> = Vec::new();
        let mut slots = Vec::new();
        for (line, (skeleton, line_slots)) in question.iter().zip(skeletons) {
            if !parts.is_empty() {
                parts.push(LINE_BREAK.into());
            }
            if self.frame_lines.contains(&skeleton) {
                parts.push(skeleton);
                slots.extend(line_slots);
            } else {
                parts.push(SLOT.into());
                slots.push(line.join(" "));
            }
        }
        (parts.join(" "), slots)
    }

    /// A question's kept template id and its slot values.
    pub(super) fn shape(&self, question: &[Vec<String>]) -> (Option<usize>, Vec<String>) {
        self.keep(self.template(question))
    }

    /// The kept template id of a [`Shape`], and its slot values.
    pub(super) fn keep(&self, (template, slots): Shape) -> (Option<usize>, Vec<String>) {
        (self.ids.id(&template), slots)
    }
}

/// Items that occur in at least `min_count` of the given lists (an item counts once
/// per list), in no particular order.
pub(super) fn frequent<'s>(lists: impl Iterator<Item = Vec<&'s str>>, min_count: usize) -> Vec<&'s str> {
    let mut counts: FastMap<&str, usize> = FastMap::default();
    for mut list in lists {
        list.sort_unstable();
        list.dedup();
        for item in list {
            *counts.entry(item).or_default() += 1;
        }
    }
    counts.into_iter().filter(|&(_, n)| n >= min_count).map(|(item, _)| item).collect()
}

/// Label encoders of the meta keys picked by `config` (see [`FeatureConfig::meta_fields`]).
pub(super) fn meta_encoders(train: &[&Sample], config: &FeatureConfig) -> Vec<(String, Vocab)> {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in train {
        for (k, v) in &s.meta {
            values.entry(k).or_default().insert(v);
        }
    }
    let keys: Vec<String> = match &config.meta_fields {
        Some(fields) => {
            let mut seen = BTreeSet::new();
            fields.iter().filter(|f| seen.insert(f.as_str())).cloned().collect()
        }
        None => values.iter().filter(|(_, v)| v.len() <= config.max_meta_values).map(|(k, _)| k.to_string()).collect(),
    };
    keys.into_iter()
        .map(|k| {
            let vocab = Vocab::new(values.get(k.as_str()).into_iter().flatten().copied());
            (k, vocab)
        })
        .collect()
}

/// The question's non-empty lines, each as lowercase word and punctuation tokens.
pub(super) fn lines_of(text: &str) -> Vec<Vec<String>> {
    text.lines().map(tokens).filter(|line| !line.is_empty()).collect()
}

/// The key of a whole question: its tokens, lines separated by a line-break token.
pub(super) fn whole_key(question: &[Vec<String>]) -> String {
    question.iter().map(|line| line.join(" ")).collect::<Vec<_>>().join(&format!(" {LINE_BREAK} "))
}

/// Lowercase tokens: runs of letters and digits (keeping `3.5`, `1,000` and `don't`
/// whole) and every other non-space character on its own.
pub(super) fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        let inner_number = matches!(c, '.' | ',') && prev.is_ascii_digit() && next.is_ascii_digit();
        let inner_apostrophe = matches!(c, '\'' | '’') && prev.is_alphanumeric() && next.is_alphanumeric();
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() && (inner_number || inner_apostrophe) {
            word.push(if inner_apostrophe { '\'' } else { c });
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

pub(super) fn is_word(token: &str) -> bool {
    token.chars().any(char::is_alphanumeric)
}

/// Numbers in a question: tokens that start with a digit (`3`, `2.5`, `1990s`, `2nd`).
pub(super) fn is_number(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_digit())
}

/// The words and adjacent word pairs of a text.
pub(super) fn terms(words: &[String]) -> BTreeSet<String> {
    let pairs = words.windows(2).map(|w| format!("{} {}", w[0], w[1]));
    words.iter().cloned().chain(pairs).collect()
}

/// Lowercase, trimmed, inner whitespace collapsed: the key of an option or answer text.
pub(super) fn normalize(text: &str) -> String {
    text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
}

/// The number a text starts with (`"2.5 m"` → 2.5, `"-3"` → -3, `"1,200"` → 1200),
/// NaN when it does not start with one.
pub(super) fn leading_number(text: &str) -> f64 {
    let t = text.trim_start();
    let (sign, rest) = match t.strip_prefix(['-', '−']) {
        Some(rest) => (-1.0, rest),
        None => (1.0, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(rest.len());
    let digits: String = rest[..end].chars().filter(|&c| c != ',').collect();
    let digits = digits.trim_end_matches('.');
    if !digits.contains(|c: char| c.is_ascii_digit()) {
        return f64::NAN;
    }
    digits.parse::<f64>().map_or(f64::NAN, |v| sign * v)
}

/// `log10(v + 1)`, the release's scale for counts and sizes; NaN at or below -1.
pub(super) fn log1p10(v: f64) -> f64 {
    if v > -1.0 { (v + 1.0).log10() } else { f64::NAN }
}

pub(super) fn jaccard(a: &BTreeSet<&String>, b: &BTreeSet<&String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 { 0.0 } else { a.intersection(b).count() as f64 / union as f64 }
}
