//! Fold-safe statistics: vocabularies, answer targets and tallies, and the
//! moments of numeric answers, all fit on the training folds only.

use super::*;

/// Distinct training strings, each encoded by its rank in sorted order. Only looked
/// up, never iterated, so the hash map's order cannot reach a matrix.
#[derive(Debug, Clone, Default)]
pub(super) struct Vocab(pub(super) FastMap<String, usize>);

impl Vocab {
    pub(super) fn new<'s>(items: impl Iterator<Item = &'s str>) -> Vocab {
        // Most items repeat (option texts, terms): dedup by hash, then sort the few
        // distinct ones for their ranks.
        let distinct: FastSet<&str> = items.collect();
        let mut sorted: Vec<&str> = distinct.into_iter().collect();
        sorted.sort_unstable();
        Vocab(sorted.into_iter().enumerate().map(|(id, s)| (s.to_string(), id)).collect())
    }

    pub(super) fn id(&self, item: &str) -> Option<usize> {
        self.0.get(item).copied()
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Label encoding: the id, -1 for a value unseen in training, NaN for no value.
    pub(super) fn code(&self, value: Option<&str>) -> f64 {
        value.map_or(f64::NAN, |v| self.id(v).map_or(-1.0, |id| id as f64))
    }
}

/// What a training answer contributes to statistics, by answer format.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Target {
    Yes(bool),
    /// Multiple choice: the gold option's text id and leading number.
    Gold {
        text: usize,
        number: f64,
    },
    Number(f64),
    /// Open: the answer's text id.
    Text(usize),
}

/// The normalized text a training answer is counted under: the gold option's text for
/// multiple choice (the answer when the index is missing or out of range), the answer
/// for open questions, none otherwise.
pub(super) fn answer_text(s: &Sample, format: AnswerFormat) -> Option<String> {
    match format {
        AnswerFormat::MultipleChoice => {
            let by_index = s.answer_index.and_then(|i| usize::try_from(i).ok()).and_then(|i| s.options.get(i));
            Some(normalize(by_index.unwrap_or(&s.answer)))
        }
        AnswerFormat::Open => Some(normalize(&s.answer)),
        AnswerFormat::YesNo | AnswerFormat::Numeric => None,
    }
}

/// Running answer statistics of one key (template, slot value or question).
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    pub(super) count: usize,
    pub(super) yes: usize,
    pub(super) no: usize,
    pub(super) texts: BTreeMap<usize, usize>,
    pub(super) raw: Moments,
    pub(super) log: Moments,
}

impl Tally {
    pub(super) fn add(&mut self, target: Option<&Target>) {
        self.count += 1;
        match target {
            Some(Target::Yes(true)) => self.yes += 1,
            Some(Target::Yes(false)) => self.no += 1,
            Some(&Target::Gold { text, number }) => {
                self.raw.add(number);
                self.log.add(log1p10(number));
                *self.texts.entry(text).or_default() += 1;
            }
            Some(&Target::Number(v)) => {
                self.raw.add(v);
                self.log.add(log1p10(v));
            }
            Some(&Target::Text(text)) => *self.texts.entry(text).or_default() += 1,
            None => {}
        }
    }

    pub(super) fn finish(self) -> Stat {
        // Most frequent text; ties go to the smallest id (= smallest text), so the
        // choice is stable.
        let mode = self.texts.iter().fold(None, |best: Option<(usize, usize)>, (&t, &n)| match best {
            Some((_, m)) if m >= n => best,
            _ => Some((t, n)),
        });
        let yes_no = self.yes + self.no;
        Stat {
            count: self.count,
            p_yes: if yes_no > 0 { self.yes as f64 / yes_no as f64 } else { f64::NAN },
            answered: self.texts.values().sum(),
            texts: self.texts,
            mode: mode.map(|(t, _)| t),
            mode_count: mode.map_or(0, |(_, n)| n),
            raw: self.raw,
            log: self.log,
        }
    }
}

/// Final answer statistics of one key.
#[derive(Debug, Clone)]
pub(super) struct Stat {
    pub(super) count: usize,
    pub(super) p_yes: f64,
    pub(super) texts: BTreeMap<usize, usize>,
    pub(super) answered: usize,
    pub(super) mode: Option<usize>,
    pub(super) mode_count: usize,
    pub(super) raw: Moments,
    pub(super) log: Moments,
}

impl Stat {
    /// Share of this key's answered training questions whose answer was `text`
    /// (a text unseen in training: 0).
    pub(super) fn share(&self, text: Option<usize>) -> f64 {
        if self.answered == 0 {
            return f64::NAN;
        }
        text.and_then(|t| self.texts.get(&t)).copied().unwrap_or(0) as f64 / self.answered as f64
    }

    /// Share of the most common answer.
    pub(super) fn top_share(&self) -> f64 {
        if self.answered == 0 { f64::NAN } else { self.mode_count as f64 / self.answered as f64 }
    }
}

/// Mean and sample standard deviation by Welford's update; NaN values are skipped.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Moments {
    pub(super) n: usize,
    pub(super) mean: f64,
    pub(super) m2: f64,
}

impl Moments {
    pub(super) fn add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        self.n += 1;
        let delta = v - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (v - self.mean);
    }

    pub(super) fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.mean }
    }

    /// Sample standard deviation (pandas' `std`); 0 for a single value, as the
    /// release fills it.
    pub(super) fn std(&self) -> f64 {
        match self.n {
            0 => f64::NAN,
            1 => 0.0,
            n => (self.m2 / (n - 1) as f64).sqrt(),
        }
    }
}
