//! Declarative feature recipes: what automation cannot guess, written in the pipeline
//! file instead of code.
//!
//! A recipe pulls *fields* out of each question with regular expressions (the named
//! groups of `[[diagnose.recipes]] extract`), then asks for statistic families over them
//! (`stats`) and keyword flags. The featurizer ([`super::features`]) turns the fields
//! into keys and fits every statistic on the training folds only, exactly like its
//! automatic families, so a recipe cannot leak a held-out answer: extraction reads the
//! question, its context, its options and its meta, never the answer.
//!
//! ```toml
//! [[diagnose.recipes]]
//! name = "counting"
//! types = ["object_counting"]
//! extract = [{ regex = 'how many (?<object>.+?)\(s\)' }]
//! stats = [{ key = "object", families = ["count", "moments", "log-moments"] }]
//! ```
//!
//! gives, for a counting question, `recipe.counting.object.count`, `.mean`, `.std`,
//! `.log_mean` and `.log_std`: the training questions about the same object, and the
//! mean and spread of their answers (the TsT release's per-object counting prior).

use std::collections::BTreeSet;
use std::sync::Arc;

use regex::Regex;

/// A statistic family of a recipe key (the pipeline file's `families`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum Family {
    Count,
    Moments,
    LogMoments,
    Gold,
    LogDistance,
    Value,
}

/// A recipe as written, before it is checked: what `[[diagnose.recipes]]` says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecipeSource {
    pub name: String,
    pub types: Option<Vec<String>>,
    pub extract: Vec<ExtractSource>,
    pub stats: Vec<StatSource>,
    pub keywords: Vec<String>,
}

/// One `extract` entry: where to look (`None`: the question) and the expression.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractSource {
    pub from: Option<String>,
    pub regex: String,
}

/// One `stats` entry: the key's fields, whether their order counts, the families.
#[derive(Debug, Clone, PartialEq)]
pub struct StatSource {
    pub key: Vec<String>,
    pub ordered: bool,
    pub families: Vec<Family>,
}

/// A checked recipe, its expressions compiled.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Recipe {
    pub name: String,
    /// Question types it applies to; `None` = every type.
    pub types: Option<BTreeSet<String>>,
    pub extract: Vec<Extract>,
    pub stats: Vec<StatSpec>,
    pub keywords: Vec<Keyword>,
}

/// Recipes compare by their source, the compiled expressions being a function of it.
impl PartialEq for Recipe {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.types == other.types
            && self.extract == other.extract
            && self.stats == other.stats
            && self.keywords.iter().map(|k| &k.text).eq(other.keywords.iter().map(|k| &k.text))
    }
}

/// Where an expression looks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Source {
    Question,
    Context,
    /// Every option on its own: the fields get one value per option.
    Options,
    Meta(String),
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Extract {
    pub from: Source,
    #[serde(serialize_with = "serialize_regex")]
    pub regex: Regex,
    /// The expression's named groups, in order: the fields it fills.
    pub fields: Vec<String>,
}

impl PartialEq for Extract {
    fn eq(&self, other: &Self) -> bool {
        self.from == other.from && self.regex.as_str() == other.regex.as_str()
    }
}

/// Statistic families over one key: a field, or fields combined.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StatSpec {
    pub fields: Vec<String>,
    pub ordered: bool,
    /// Sorted, distinct.
    pub families: Vec<Family>,
    /// Whether the fields come from the options (one key per option).
    pub per_option: bool,
}

impl StatSpec {
    /// The key's part of column names: `object`, `object1+object2`.
    pub fn label(&self) -> String {
        self.fields.join("+")
    }

    pub fn has(&self, family: Family) -> bool {
        self.families.contains(&family)
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Keyword {
    pub text: String,
    #[serde(serialize_with = "serialize_regex")]
    regex: Regex,
}

/// A compiled expression as its source text (for the stage cache's key).
fn serialize_regex<S: serde::Serializer>(r: &Regex, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.as_str())
}

/// The recipes of a config, in order (for the stage cache's key).
pub(super) fn serialize_all<S: serde::Serializer>(recipes: &Arc<[Recipe]>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(recipes.iter())
}

impl Keyword {
    pub fn in_text(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

/// A problem in a recipe: the key path inside `[diagnose]` (`recipes[0].extract[1].regex`),
/// what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeProblem {
    pub key: String,
    pub message: String,
    pub help: Option<String>,
}

fn problem(key: String, message: impl Into<String>, help: Option<&str>) -> RecipeProblem {
    RecipeProblem { key, message: message.into(), help: help.map(str::to_string) }
}

/// Families that mean something for a key read from the options.
const OPTION_FAMILIES: [Family; 3] = [Family::Count, Family::Gold, Family::Value];

/// Checks and compiles the recipes of a pipeline; every problem is returned.
pub fn compile(wire: &[RecipeSource]) -> Result<Arc<[Recipe]>, Vec<RecipeProblem>> {
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    let mut recipes = Vec::new();
    for (i, w) in wire.iter().enumerate() {
        let at = |rest: &str| format!("recipes[{i}].{rest}");
        if w.name.is_empty() || !w.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            problems.push(problem(
                at("name"),
                format!("\"{}\" is not a valid recipe name", w.name),
                Some("use letters, digits, '-' and '_' (it names columns: recipe.<name>.*)"),
            ));
        } else if !names.insert(w.name.clone()) {
            problems.push(problem(at("name"), format!("two recipes are named \"{}\"", w.name), Some("rename one")));
        }
        let (extract, fields) = compile_extracts(w, &at, &mut problems);
        let stats =
            w.stats.iter().enumerate().map(|(j, s)| compile_stat(w, j, s, &fields, &at, &mut problems)).collect();
        let keywords = compile_keywords(w, &at, &mut problems);
        if w.extract.is_empty() && w.keywords.is_empty() {
            problems.push(problem(
                at("name"),
                format!("recipe \"{}\" extracts nothing and flags no keyword", w.name),
                Some("add extract = [...] with stats = [...], or keywords = [...]"),
            ));
        }
        let types = w.types.as_ref().map(|t| t.iter().cloned().collect());
        recipes.push(Recipe { name: w.name.clone(), types, extract, stats, keywords });
    }
    if problems.is_empty() { Ok(recipes.into()) } else { Err(problems) }
}

/// Recipe `w`'s extractions, and the fields they name, each with whether it
/// is read from the options. `at` names a key of the recipe in a problem.
fn compile_extracts(
    w: &RecipeSource,
    at: &dyn Fn(&str) -> String,
    problems: &mut Vec<RecipeProblem>,
) -> (Vec<Extract>, Vec<(String, bool)>) {
    let mut extract = Vec::new();
    let mut fields: Vec<(String, bool)> = Vec::new();
    for (j, e) in w.extract.iter().enumerate() {
        let from = match e.from.as_deref().unwrap_or("question") {
            "question" => Some(Source::Question),
            "context" => Some(Source::Context),
            "options" => Some(Source::Options),
            other => match other.strip_prefix("meta:") {
                Some(field) if !field.is_empty() => Some(Source::Meta(field.to_string())),
                _ => {
                    problems.push(problem(
                        at(&format!("extract[{j}].from")),
                        format!("\"{other}\" is not a text to extract from"),
                        Some("write \"question\", \"context\", \"options\" or \"meta:FIELD\""),
                    ));
                    None
                }
            },
        };
        let regex = match regex::RegexBuilder::new(&e.regex).case_insensitive(true).build() {
            Ok(r) => r,
            Err(err) => {
                let first = err.to_string().lines().last().unwrap_or_default().trim().to_string();
                problems.push(problem(
                    at(&format!("extract[{j}].regex")),
                    format!("invalid regular expression: {first}"),
                    Some(
                        "Rust regex syntax; in TOML prefer a literal string: regex = 'how many (?<object>.+?)\\(s\\)'",
                    ),
                ));
                continue;
            }
        };
        let named: Vec<String> = regex.capture_names().flatten().map(str::to_string).collect();
        if named.is_empty() {
            problems.push(problem(
                at(&format!("extract[{j}].regex")),
                "the expression names no field",
                Some("name the part to keep with a named group: (?<object>...)"),
            ));
        }
        let Some(from) = from else { continue };
        for f in &named {
            if fields.iter().any(|(g, _)| g == f) {
                problems.push(problem(
                    at(&format!("extract[{j}].regex")),
                    format!("field \"{f}\" is extracted twice in recipe \"{}\"", w.name),
                    Some("give each named group its own name"),
                ));
            } else {
                fields.push((f.clone(), from == Source::Options));
            }
        }
        extract.push(Extract { from, regex, fields: named });
    }
    (extract, fields)
}

/// Recipe `w`'s statistic `j` (`s`), over the extracted `fields`.
fn compile_stat(
    w: &RecipeSource,
    j: usize,
    s: &StatSource,
    fields: &[(String, bool)],
    at: &dyn Fn(&str) -> String,
    problems: &mut Vec<RecipeProblem>,
) -> StatSpec {
    let key = s.key.clone();
    let mut per_option = BTreeSet::new();
    for f in &key {
        match fields.iter().find(|(g, _)| g == f) {
            Some(&(_, opt)) => {
                per_option.insert(opt);
            }
            None => {
                let known: Vec<&str> = fields.iter().map(|(g, _)| g.as_str()).collect();
                let help = if known.is_empty() {
                    "extract it first: extract = [{ regex = '...(?<name>...)...' }]".to_string()
                } else {
                    format!("fields of this recipe: {}", known.join(", "))
                };
                problems.push(RecipeProblem {
                    key: at(&format!("stats[{j}].key")),
                    message: format!("no field \"{f}\" is extracted in recipe \"{}\"", w.name),
                    help: Some(help),
                });
            }
        }
    }
    if key.is_empty() {
        problems.push(problem(at(&format!("stats[{j}].key")), "the key names no field", None));
    }
    if per_option.len() > 1 {
        problems.push(problem(
            at(&format!("stats[{j}].key")),
            "a key mixes fields of the options with fields of the question",
            Some("combine fields of one kind only"),
        ));
    }
    let per_option = per_option.contains(&true);
    let families: Vec<Family> = s.families.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
    if families.is_empty() {
        problems.push(problem(
            at(&format!("stats[{j}].families")),
            "no statistic family is asked for",
            Some("list some of count, moments, log-moments, gold, log-distance, value"),
        ));
    }
    if per_option && let Some(bad) = families.iter().find(|f| !OPTION_FAMILIES.contains(f)) {
        problems.push(problem(
            at(&format!("stats[{j}].families")),
            format!("\"{}\" does not apply to a field read from the options", family_name(*bad)),
            Some("option fields take count, gold and value"),
        ));
    }
    if key.len() > 1 && families.contains(&Family::Value) {
        problems.push(problem(
            at(&format!("stats[{j}].families")),
            "\"value\" reads one field as a number, not a combination",
            Some("ask for value on a key of one field"),
        ));
    }
    StatSpec { fields: key, ordered: s.ordered, families, per_option }
}

/// Recipe `w`'s keywords, each a case-insensitive whole-word pattern.
fn compile_keywords(w: &RecipeSource, at: &dyn Fn(&str) -> String, problems: &mut Vec<RecipeProblem>) -> Vec<Keyword> {
    let mut keywords = Vec::new();
    for (j, k) in w.keywords.iter().enumerate() {
        let text = k.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if text.is_empty() {
            problems.push(problem(at(&format!("keywords[{j}]")), "an empty keyword", None));
            continue;
        }
        let words: Vec<String> = text.split(' ').map(regex::escape).collect();
        let pattern = format!(r"(?i)(?:^|\W){}(?:\W|$)", words.join(r"\s+"));
        match Regex::new(&pattern) {
            Ok(regex) => keywords.push(Keyword { text, regex }),
            Err(e) => problems.push(problem(at(&format!("keywords[{j}]")), e.to_string(), None)),
        }
    }
    keywords
}

/// The pipeline-file spelling of a family.
pub fn family_name(f: Family) -> &'static str {
    match f {
        Family::Count => "count",
        Family::Moments => "moments",
        Family::LogMoments => "log-moments",
        Family::Gold => "gold",
        Family::LogDistance => "log-distance",
        Family::Value => "value",
    }
}

/// The texts one question offers to extraction: never its answer.
pub struct Texts<'a> {
    pub question: &'a str,
    pub context: Option<&'a str>,
    pub options: &'a [String],
    pub meta: &'a std::collections::BTreeMap<String, String>,
}

/// The fields a recipe extracts from one question: question-level fields (one value or
/// none) and option-level fields (one value or none per option).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields {
    pub question: Vec<(String, Option<String>)>,
    pub options: Vec<(String, Vec<Option<String>>)>,
}

impl Fields {
    fn question_value(&self, field: &str) -> Option<&str> {
        self.question.iter().find(|(f, _)| f == field).and_then(|(_, v)| v.as_deref())
    }

    fn option_value(&self, field: &str, j: usize) -> Option<&str> {
        self.options.iter().find(|(f, _)| f == field).and_then(|(_, v)| v.get(j)?.as_deref())
    }
}

impl Recipe {
    /// Whether the recipe reads questions of this type.
    pub fn applies(&self, question_type: Option<&str>) -> bool {
        match &self.types {
            None => true,
            Some(types) => question_type.is_some_and(|t| types.contains(t)),
        }
    }

    /// Runs every expression on one question.
    pub fn fields(&self, x: &Texts<'_>) -> Fields {
        let mut out = Fields::default();
        for e in &self.extract {
            let capture = |text: &str| -> Vec<Option<String>> {
                let caps = e.regex.captures(text);
                e.fields
                    .iter()
                    .map(|f| caps.as_ref().and_then(|c| c.name(f)).map(|m| clean(m.as_str())).filter(|v| !v.is_empty()))
                    .collect()
            };
            match &e.from {
                Source::Options => {
                    let per_option: Vec<Vec<Option<String>>> = x.options.iter().map(|o| capture(o)).collect();
                    for (k, f) in e.fields.iter().enumerate() {
                        out.options.push((f.clone(), per_option.iter().map(|v| v[k].clone()).collect()));
                    }
                }
                source => {
                    let text = match source {
                        Source::Question => Some(x.question),
                        Source::Context => x.context,
                        Source::Meta(field) => x.meta.get(field).map(String::as_str),
                        Source::Options => None,
                    };
                    let values = text.map_or_else(|| vec![None; e.fields.len()], capture);
                    out.question.extend(e.fields.iter().cloned().zip(values));
                }
            }
        }
        out
    }

    /// The key of a question-level statistic: its fields' values joined by `+` (sorted
    /// unless ordered); `None` when a field is missing.
    pub fn key(&self, spec: &StatSpec, fields: &Fields) -> Option<String> {
        let mut parts: Vec<&str> = spec.fields.iter().map(|f| fields.question_value(f)).collect::<Option<_>>()?;
        if !spec.ordered {
            parts.sort_unstable();
        }
        Some(parts.join(" + "))
    }

    /// The keys of an option-level statistic, one per option.
    pub fn option_keys(&self, spec: &StatSpec, fields: &Fields, n_options: usize) -> Vec<Option<String>> {
        (0..n_options)
            .map(|j| {
                let mut parts: Vec<&str> =
                    spec.fields.iter().map(|f| fields.option_value(f, j)).collect::<Option<_>>()?;
                if !spec.ordered {
                    parts.sort_unstable();
                }
                Some(parts.join(" + "))
            })
            .collect()
    }
}

/// Lowercase, trimmed, inner whitespace collapsed.
fn clean(text: &str) -> String {
    text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    fn wire(extract: &[(&str, &str)], stats: &[(&[&str], &[Family])], keywords: &[&str]) -> RecipeSource {
        RecipeSource {
            name: "r".into(),
            types: None,
            extract: extract
                .iter()
                .map(|(from, regex)| ExtractSource { from: Some((*from).into()), regex: (*regex).into() })
                .collect(),
            stats: stats
                .iter()
                .map(|(key, families)| StatSource {
                    key: key.iter().map(|k| k.to_string()).collect(),
                    ordered: false,
                    families: families.to_vec(),
                })
                .collect(),
            keywords: keywords.iter().map(|k| k.to_string()).collect(),
        }
    }

    #[test]
    fn extracts_fields_and_pair_keys() {
        let w = wire(
            &[("question", r"between the (?<a>[\w ]+?) and the (?<b>[\w ]+?) \(")],
            &[(&["a", "b"], &[Family::Count])],
            &["left", "in front of"],
        );
        let recipes = compile(&[w]).unwrap();
        let r = &recipes[0];
        let meta = BTreeMap::new();
        let texts = |q: &'static str| Texts { question: q, context: None, options: &[], meta: &meta };
        let f1 = r.fields(&texts("What is the distance between the Chair and the  table (in meters)?"));
        let f2 = r.fields(&texts("What is the distance between the table and the chair (in meters)?"));
        assert_eq!(r.key(&r.stats[0], &f1).as_deref(), Some("chair + table"));
        assert_eq!(r.key(&r.stats[0], &f1), r.key(&r.stats[0], &f2));
        assert_eq!(r.key(&r.stats[0], &r.fields(&texts("How many chairs?"))), None);
        assert!(r.keywords[0].in_text("Is it to the LEFT?"));
        assert!(!r.keywords[0].in_text("leftover"));
        assert!(r.keywords[1].in_text("the lamp in  front of the bed"));
    }

    #[test]
    fn option_fields_have_one_value_per_option() {
        let w = wire(&[("options", r"^(?<object>[a-z ]+)$")], &[(&["object"], &[Family::Gold])], &[]);
        let recipes = compile(&[w]).unwrap();
        let r = &recipes[0];
        let meta = BTreeMap::new();
        let options = vec!["Sofa".to_string(), "3 m".to_string(), "tv stand".to_string()];
        let f = r.fields(&Texts { question: "q", context: None, options: &options, meta: &meta });
        assert!(r.stats[0].per_option);
        assert_eq!(r.option_keys(&r.stats[0], &f, 3), vec![Some("sofa".into()), None, Some("tv stand".into())]);
    }

    #[test]
    fn every_problem_is_located() {
        let mut bad = wire(
            &[("question", "how many (?<object>.+"), ("pixels", "x"), ("options", "(?<o>.+)")],
            &[(&["objekt"], &[]), (&["o"], &[Family::Moments]), (&["o", "o"], &[Family::Value])],
            &[],
        );
        bad.name = "bad name".into();
        let problems = compile(&[bad]).unwrap_err();
        let keys: Vec<&str> = problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "recipes[0].name",
                "recipes[0].extract[0].regex",
                "recipes[0].extract[1].from",
                "recipes[0].extract[1].regex",
                "recipes[0].stats[0].key",
                "recipes[0].stats[0].families",
                "recipes[0].stats[1].families",
                "recipes[0].stats[2].families",
            ]
        );
        assert!(problems[1].message.starts_with("invalid regular expression"), "{:?}", problems[1]);
    }
}
