//! Small domain rules every stage shares: the chance level of a question,
//! how a number is read from an answer, and mean relative accuracy (MRA).

use super::{AnswerFormat, Sample};

/// Chance of a sample: 1/options, 1/2 for yes/no, 0 for open and numeric.
pub fn chance(s: &Sample) -> f64 {
    match s.answer_format {
        AnswerFormat::MultipleChoice => 1.0 / s.options.len().max(1) as f64,
        AnswerFormat::YesNo => 0.5,
        AnswerFormat::Numeric | AnswerFormat::Open => 0.0,
    }
}

/// MRA's comparison: the release's strict `<` or VSI-Bench's own `≤`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum MraRule {
    Strict,
    Inclusive,
}

impl MraRule {
    /// Parses `strict` or `inclusive`.
    pub fn parse(s: &str) -> std::result::Result<MraRule, String> {
        match s {
            "strict" => Ok(MraRule::Strict),
            "inclusive" => Ok(MraRule::Inclusive),
            _ => Err(format!("mra \"{s}\" is not \"strict\" or \"inclusive\"")),
        }
    }
}

/// Mean relative accuracy over thresholds 0.50, 0.55, …, 0.95. A gold of 0
/// has no relative error: only an exact 0 scores.
pub fn mra(pred: f64, gold: f64, rule: MraRule) -> f64 {
    if !pred.is_finite() {
        return 0.0;
    }
    if gold == 0.0 {
        return f64::from(u8::from(pred == 0.0));
    }
    let rel = (pred - gold).abs() / gold.abs();
    let hits = (0u32..10)
        .filter(|t: &u32| {
            // Thresholds as exact hundredths: 1 - θ = 0.50, 0.45, …, 0.05.
            let bound = f64::from(50 - 5 * *t) / 100.0;
            match rule {
                MraRule::Strict => rel < bound,
                MraRule::Inclusive => rel <= bound,
            }
        })
        .count();
    hits as f64 / 10.0
}

/// How a numeric answer is scored against its gold.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum NumericScoring {
    /// 1 when the numbers are equal (`3.50` and `3.5` are), else 0 — the
    /// published scorers of most benchmarks (MathVista, ChartQA's strict form).
    Exact,
    /// Mean relative accuracy (partial credit; VSI-Bench and the TsT protocol).
    Mra,
    /// 1 when |pred − gold| ≤ rel·|gold| (an exact 0 for a gold of 0), else 0.
    Tolerance(f64),
}

impl NumericScoring {
    /// Parses `exact`, `mra` or `tolerance:<rel>` (rel in [0, 1)).
    pub fn parse(s: &str) -> std::result::Result<NumericScoring, String> {
        match s.split_once(':') {
            None if s == "exact" => Ok(NumericScoring::Exact),
            None if s == "mra" => Ok(NumericScoring::Mra),
            Some(("tolerance", r)) => match r.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..1.0).contains(&v) => Ok(NumericScoring::Tolerance(v)),
                _ => Err(format!(
                    "numeric \"{s}\": the tolerance must be a relative error in [0, 1), e.g. tolerance:0.05"
                )),
            },
            _ => Err(format!("numeric \"{s}\" is not \"exact\", \"mra\" or \"tolerance:<rel>\"")),
        }
    }

    /// The setting as written (`exact`, `mra`, `tolerance:0.05`).
    pub fn name(&self) -> String {
        match self {
            NumericScoring::Exact => "exact".into(),
            NumericScoring::Mra => "mra".into(),
            NumericScoring::Tolerance(r) => format!("tolerance:{r}"),
        }
    }

    /// The score of `pred` against `gold` (0 for a non-finite prediction).
    pub fn score(&self, pred: f64, gold: f64, rule: MraRule) -> f64 {
        if !pred.is_finite() || !gold.is_finite() {
            return 0.0;
        }
        match self {
            NumericScoring::Mra => mra(pred, gold, rule),
            NumericScoring::Exact => f64::from(u8::from(pred == gold)),
            NumericScoring::Tolerance(r) => f64::from(u8::from((pred - gold).abs() <= r * gold.abs())),
        }
    }
}

/// Text compared for equality (answer parsing, the meta audit): lowercase,
/// punctuation to spaces, the articles a/an/the dropped, whitespace collapsed.
pub fn normalize_text(s: &str) -> String {
    let lowered = s.to_lowercase();
    let cleaned: String = lowered.chars().map(|c| if c.is_alphanumeric() || c == '.' { c } else { ' ' }).collect();
    cleaned
        .split_whitespace()
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty() && !matches!(*w, "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The label of option `i`: `A`..`Z`, then its 1-based number.
pub fn option_letter(i: usize) -> String {
    match u8::try_from(i) {
        Ok(n) if n < 26 => char::from(b'A' + n).to_string(),
        _ => (i + 1).to_string(),
    }
}

/// A finite number written plainly (`3`, `-2.5`, `1e3`, `1,000`): a comma only
/// between groups of three digits (`1,5` and `1.000.000` are not numbers, rather
/// than 15 and a guess).
pub fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() || t.chars().any(|c| c.is_alphabetic() && c != 'e' && c != 'E') {
        return None;
    }
    let t = if t.contains(',') {
        let digits_end = t.find(|c: char| c != '-' && c != '+' && c != ',' && !c.is_ascii_digit()).unwrap_or(t.len());
        let (int, rest) = t.split_at(digits_end);
        let unsigned = int.trim_start_matches(['-', '+']);
        let mut groups = unsigned.split(',');
        let first_ok = groups.next().is_some_and(|g| (1..=3).contains(&g.len()));
        if !first_ok || !groups.all(|g| g.len() == 3) || rest.contains(',') {
            return None;
        }
        std::borrow::Cow::Owned(t.replace(',', ""))
    } else {
        std::borrow::Cow::Borrowed(t)
    };
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_from_answers() {
        assert_eq!(parse_number("1e3"), Some(1000.0));
        assert_eq!(parse_number("1,234"), Some(1234.0));
        assert_eq!(parse_number("-12,345,678.5"), Some(-12_345_678.5));
        for not_one in ["1,5", "1.000.000", "3 or 4", "12,34,567", ",123", "1_000"] {
            assert_eq!(parse_number(not_one), None, "{not_one}");
        }
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("two"), None);
    }

    #[test]
    fn numeric_scoring_settings() {
        let exact = NumericScoring::parse("exact").unwrap();
        assert_eq!(exact.score(3.5, 3.50, MraRule::Strict), 1.0);
        assert_eq!(exact.score(3.4, 3.5, MraRule::Strict), 0.0);
        let tol = NumericScoring::parse("tolerance:0.05").unwrap();
        assert_eq!(tol.name(), "tolerance:0.05");
        assert_eq!(tol.score(104.0, 100.0, MraRule::Strict), 1.0);
        assert_eq!(tol.score(106.0, 100.0, MraRule::Strict), 0.0);
        assert_eq!(tol.score(0.01, 0.0, MraRule::Strict), 0.0);
        assert_eq!(NumericScoring::Mra.score(10.5, 10.0, MraRule::Strict), 0.9);
        assert_eq!(exact.score(f64::NAN, 1.0, MraRule::Strict), 0.0);
        assert!(NumericScoring::parse("tolerance:1.5").is_err());
        assert!(NumericScoring::parse("tolerance:x").is_err());
        assert!(NumericScoring::parse("close").is_err());
    }
}
