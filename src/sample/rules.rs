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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A finite number written plainly (`3`, `-2.5`, `1e3`, `1,000`).
pub fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim().replace(',', "");
    if t.is_empty() || t.chars().any(|c| c.is_alphabetic() && c != 'e' && c != 'E') {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_from_answers() {
        assert_eq!(parse_number("1e3"), Some(1000.0));
        assert_eq!(parse_number("1,234"), Some(1234.0));
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("two"), None);
    }
}
