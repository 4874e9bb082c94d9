//! Reading a gold answer: which option it names (by text, letter, labelled
//! letter or index) and in which readings, and the answer format an answer
//! without options implies.

use super::LETTERS;
use super::short;
use crate::plan::AnswerKind;
use crate::raw::Raw;
use crate::sample::{AnswerFormat, parse_number};

/// (message, help) for an answer that does not name an option.
pub(super) struct ChoiceError(pub(super) String, pub(super) Option<String>);

fn letters_range(n: usize) -> String {
    match n {
        0 => "none".into(),
        1 => "A".into(),
        _ => format!("A-{}", LETTERS.get(n - 1).map_or('?', |&c| c as char)),
    }
}

/// The readings of a gold answer that `answer-kind = "auto"` tries, as bits: the
/// text of an option, an option letter (or `B. text`), a 0-based index.
pub const READ_TEXT: u8 = 1;
pub const READ_LETTER: u8 = 2;
pub const READ_INDEX: u8 = 4;

/// The names of the readings in `mask`, for messages.
pub fn reading_names(mask: u8) -> String {
    let names: Vec<&str> = [(READ_TEXT, "option text"), (READ_LETTER, "a letter"), (READ_INDEX, "a 0-based index")]
        .iter()
        .filter(|(b, _)| mask & b != 0)
        .map(|(_, n)| *n)
        .collect();
    names.join(" or ")
}

/// A text as compared when case and Unicode normalization are ignored.
pub fn folded(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.trim().nfc().collect::<String>().to_lowercase()
}

/// The option a gold answer names, and the readings (`READ_*` bits) that name it.
/// Under `auto`, every reading is tried: two that name different options are an
/// error naming `answer-kind`, never a choice.
pub(super) fn resolve_choice(raw: &Raw, options: &[String], kind: AnswerKind) -> Result<(usize, u8), ChoiceError> {
    let gold = Gold { raw, options, text: raw.scalar_text().unwrap_or_default().trim().to_string() };
    let only = |r: Result<usize, ChoiceError>, bit: u8| r.map(|i| (i, bit));
    let not_an_index = || ChoiceError(format!("the answer \"{}\" is not an option index", short(&gold.text)), None);
    match kind {
        AnswerKind::Text => only(gold.by_text()?.ok_or_else(|| gold.not_found()), READ_TEXT),
        AnswerKind::Letter => only(
            gold.by_letter().or_else(|| gold.by_label()).unwrap_or_else(|| {
                Err(ChoiceError(format!("the answer \"{}\" is not an option letter", short(&gold.text)), None))
            }),
            READ_LETTER,
        ),
        AnswerKind::Index => only(gold.by_index(0).unwrap_or_else(|| Err(not_an_index())), READ_INDEX),
        AnswerKind::Index1 => only(gold.by_index(1).unwrap_or_else(|| Err(not_an_index())), READ_INDEX),
        AnswerKind::Auto => gold.auto(),
    }
}

/// A gold answer (`raw`, and its text trimmed) and the options it names one of.
struct Gold<'a> {
    raw: &'a Raw,
    options: &'a [String],
    text: String,
}

impl Gold<'_> {
    /// Option `i` for a message: its letter and its text, shortened.
    fn quoted(&self, i: usize) -> String {
        format!("{} (\"{}\")", crate::sample::option_letter(i), short(&self.options[i]))
    }

    /// The option whose text the gold is: written alike, else alike once case
    /// and Unicode normalization are ignored, when that names one option only.
    fn by_text(&self) -> Result<Option<usize>, ChoiceError> {
        let (options, text) = (self.options, &self.text);
        if let Some(i) = options.iter().position(|o| o == text) {
            return Ok(Some(i));
        }
        let key = folded(text);
        let alike: Vec<usize> = (0..options.len()).filter(|&i| folded(&options[i]) == key).collect();
        match alike[..] {
            [] => Ok(None),
            [i] => Ok(Some(i)),
            _ => Err(ChoiceError(
                format!(
                    "the answer \"{}\" is the text of options {} once case and Unicode normalization are ignored",
                    short(text),
                    alike.iter().map(|&i| self.quoted(i)).collect::<Vec<_>>().join(" and ")
                ),
                Some("write the answer as one option is written, give it by letter or index (set [ingest.fields] answer-kind), or make the options distinct".into()),
            )),
        }
    }

    /// The option a lone letter names (`B`, `(B)`, `b.`).
    fn by_letter(&self) -> Option<Result<usize, ChoiceError>> {
        let n = self.options.len();
        let t = self.text.trim_matches(|c: char| c == '(' || c == ')' || c == '.' || c.is_whitespace());
        let mut chars = t.chars();
        let c = chars.next()?.to_ascii_uppercase();
        if chars.next().is_some() || !c.is_ascii_uppercase() {
            return None;
        }
        let i = (c as u8 - b'A') as usize;
        Some(if i < n {
            Ok(i)
        } else {
            Err(ChoiceError(
                format!("the answer is \"{t}\" but the question has {n} options ({})", letters_range(n)),
                Some("fix the answer or the options".into()),
            ))
        })
    }

    /// "B. dog", "(B) dog", "B) dog", "B: dog": a letter and the text of its
    /// option, which must agree.
    fn by_label(&self) -> Option<Result<usize, ChoiceError>> {
        let (i, rest) = labelled_answer(&self.text)?;
        let same = |o: &String| o.trim().eq_ignore_ascii_case(rest);
        let named = self.options.iter().position(same)?;
        Some(if i == named {
            Ok(i)
        } else {
            Err(ChoiceError(
                format!(
                    "the answer \"{}\" gives letter {} but the text of option {}",
                    short(&self.text),
                    crate::sample::option_letter(i),
                    crate::sample::option_letter(named)
                ),
                Some("fix the answer's letter or its text".into()),
            ))
        })
    }

    /// The option an integer names, counted from `base`.
    fn by_index(&self, base: i64) -> Option<Result<usize, ChoiceError>> {
        let n = self.options.len();
        let v: i64 = match self.raw {
            Raw::Int(i) => *i,
            Raw::Float(f) if f.fract() == 0.0 => *f as i64,
            _ => self.text.parse().ok()?,
        };
        let i = v - base;
        Some(if (0..n as i64).contains(&i) {
            Ok(i as usize)
        } else {
            Err(ChoiceError(
                format!(
                    "the answer is index {v} but the question has {n} options (valid: {base}..{})",
                    base + n as i64 - 1
                ),
                None,
            ))
        })
    }

    fn not_found(&self) -> ChoiceError {
        ChoiceError(
            format!("the answer \"{}\" is not among the options ({})", short(&self.text), self.options.iter().map(|o| format!("\"{}\"", short(o))).collect::<Vec<_>>().join(", ")),
            Some("set [ingest.fields] answer-kind = \"letter\" | \"index\" | \"index1\" | \"text\" if the answer is written another way".into()),
        )
    }

    /// `answer-kind = "auto"`: every reading that names an option; two that name
    /// different options are an error, and the first error of the readings that
    /// fail is reported only when none names an option.
    fn auto(&self) -> Result<(usize, u8), ChoiceError> {
        let mut read: Vec<(u8, usize)> = Vec::new();
        let mut first_error = None;
        if let Some(i) = self.by_text()? {
            read.push((READ_TEXT, i));
        }
        for (bit, r) in [(READ_LETTER, self.by_letter().or_else(|| self.by_label())), (READ_INDEX, self.by_index(0))] {
            match r {
                Some(Ok(i)) => read.push((bit, i)),
                Some(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                None => {}
            }
        }
        let Some(&(_, first)) = read.first() else { return Err(first_error.unwrap_or_else(|| self.not_found())) };
        if read.iter().any(|&(_, i)| i != first) {
            let readings: Vec<String> = read
                .iter()
                .map(|&(bit, i)| format!("as {} it is option {}", reading_names(bit), self.quoted(i)))
                .collect();
            return Err(ChoiceError(
                format!("the answer \"{}\" names two options: {}", short(&self.text), readings.join(", ")),
                Some(format!(
                    "set [ingest.fields] answer-kind to the way the source writes its answers ({})",
                    read.iter()
                        .map(|&(bit, _)| match bit {
                            READ_TEXT => "\"text\"",
                            READ_LETTER => "\"letter\"",
                            _ => "\"index\"",
                        })
                        .collect::<Vec<_>>()
                        .join(" or ")
                )),
            ));
        }
        // A reading that fails with an error (a letter beyond the options) beside one
        // that succeeds is no reading at all: the one that succeeds names the option.
        Ok((first, read.iter().fold(0, |m, &(bit, _)| m | bit)))
    }
}

/// The option letter and text of an answer written as both: `B. dog`, `(B) dog`,
/// `B) dog` or `B: dog` (the letter in either case, then text).
fn labelled_answer(text: &str) -> Option<(usize, &str)> {
    let t = text.trim_start();
    let (letter, rest) = match t.strip_prefix('(') {
        Some(inner) => {
            let mut chars = inner.chars();
            let letter = chars.next()?;
            (letter, chars.as_str().strip_prefix(')')?)
        }
        None => {
            let mut chars = t.chars();
            let letter = chars.next()?;
            let rest = chars.as_str();
            (letter, rest.strip_prefix(['.', ')', ':'])?)
        }
    };
    if !letter.is_ascii_alphabetic() || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    (!rest.is_empty()).then(|| (usize::from(letter.to_ascii_uppercase() as u8 - b'A'), rest))
}

/// multiple_choice with options; yes_no for yes/no answers; numeric for numbers; open otherwise.
pub fn infer_format(options: &[String], answer: &str) -> AnswerFormat {
    if !options.is_empty() {
        AnswerFormat::MultipleChoice
    } else if answer.eq_ignore_ascii_case("yes") || answer.eq_ignore_ascii_case("no") {
        AnswerFormat::YesNo
    } else if parse_number(answer).is_some() {
        AnswerFormat::Numeric
    } else {
        AnswerFormat::Open
    }
}
