//! The card's prose as templates (`crates/release/templates/`), rendered by
//! MiniJinja from typed serde structs.
//!
//! Markdown is the templates' target syntax, and it escapes by construction:
//! every value a template prints is written as a Markdown literal
//! ([`md::literal`]) unless a filter says otherwise: `code` (an inline code
//! span; `code_cell` in a table), `cell` (text in a table cell), `text`
//! (the publisher's own prose), `text_with(names)` (blindspot's prose quoting
//! names from the data, which stay as written),
//! `literal` (for `map`), `pct` (a rate as a percentage with one decimal),
//! `pts` (a difference of rates in signed percentage points), `fixed3` (three
//! decimals), `number` (a float as Rust writes it), `autolink` (a URL the
//! pipeline's check let through), `fenced` (a code block in a fence longer
//! than any backtick run inside), `shell` and `shell_in_single_quotes` (a word
//! of a shell command in that block), and the built-in `safe`, which marks
//! prose blindspot wrote itself (a stop reason, a setting described in
//! words). A float printed without a filter is an error rather than
//! MiniJinja's own formatting, so a number cannot change its digits by moving
//! into a template.
//!
//! Whitespace: a line holding only a tag leaves nothing behind (`trim_blocks`
//! and `lstrip_blocks`), and a template's final newline is kept.

use std::sync::LazyLock;

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State};
use serde::Serialize;

use crate::io::escape::{markdown as md, shell};

/// Every template, by name: the name is its file under `templates/`.
const TEMPLATES: &[(&str, &str)] = &[
    ("datasheet.md", include_str!("../../templates/datasheet.md")),
    ("datasheet-answers.md", include_str!("../../templates/datasheet-answers.md")),
    ("sources.md", include_str!("../../templates/sources.md")),
    ("contents.md", include_str!("../../templates/contents.md")),
    ("citation.md", include_str!("../../templates/citation.md")),
    ("diagnosis.md", include_str!("../../templates/diagnosis.md")),
    ("diagnosis-embed.md", include_str!("../../templates/diagnosis-embed.md")),
    ("prune.md", include_str!("../../templates/prune.md")),
    ("kept-groups.md", include_str!("../../templates/kept-groups.md")),
    ("answer-mix.md", include_str!("../../templates/answer-mix.md")),
    ("filter.md", include_str!("../../templates/filter.md")),
    ("fewer-folds.md", include_str!("../../templates/fewer-folds.md")),
    ("duplicates.md", include_str!("../../templates/duplicates.md")),
    ("variants.md", include_str!("../../templates/variants.md")),
    ("metrics.md", include_str!("../../templates/metrics.md")),
    ("gap.md", include_str!("../../templates/gap.md")),
    ("audit.md", include_str!("../../templates/audit.md")),
];

/// An environment whose templates print a value through `escape` unless a
/// filter says otherwise: safe strings as they are, other strings escaped,
/// integers in decimal, the value of an `if` without `else` as nothing;
/// anything else (a float, `none`) is a template bug. Whitespace as the
/// module docs say; an undefined variable is an error.
pub(crate) fn environment(syntax: &'static str, escape: fn(&str) -> String) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_auto_escape_callback(move |_| AutoEscape::Custom(syntax.into()));
    env.set_formatter(move |out: &mut minijinja::Output, _: &mut State, value: &Value| {
        let text = if value.is_safe() {
            value.as_str().unwrap_or_default().to_string()
        } else if let Some(s) = value.as_str() {
            escape(s)
        } else if value.is_integer() {
            value.to_string()
        } else if value.is_undefined() {
            // `{{ ", " if not loop.last }}`: a missing variable is an error before
            // it gets here (strict undefined behaviour).
            String::new()
        } else {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("{value:?} ({}) is printed without a filter that says how", value.kind()),
            ));
        };
        out.write_str(&text).map_err(|e| Error::new(ErrorKind::WriteFailure, e.to_string()))
    });
    env
}

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = environment("markdown", md::literal);
    env.add_filter("code", |s: &str| Value::from_safe_string(md::code(s)));
    env.add_filter("text", |s: &str| Value::from_safe_string(md::text(s)));
    env.add_filter("literal", |s: &str| Value::from_safe_string(md::literal(s)));
    env.add_filter("code_cell", |s: &str| Value::from_safe_string(md::code_cell(s)));
    env.add_filter("cell", |s: &str| Value::from_safe_string(md::cell(s)));
    // Prose blindspot wrote that quotes `data` (names from the data, shown as written).
    env.add_filter("text_with", |s: &str, data: Vec<String>| {
        Value::from_safe_string(md::text_with_data(s, &data.iter().map(String::as_str).collect::<Vec<_>>()))
    });
    env.add_filter("pct", |v: f64| Value::from_safe_string(format!("{:.1}%", v * 100.0)));
    env.add_filter("number", |v: f64| Value::from_safe_string(v.to_string()));
    env.add_filter("fixed3", |v: f64| Value::from_safe_string(format!("{v:.3}")));
    env.add_filter("pts", |v: f64| Value::from_safe_string(format!("{:+.1}", v * 100.0)));
    // The pipeline's URLs are checked to hold only RFC 3986 characters, none
    // of which ends an autolink (and a backslash escape would be shown in one).
    env.add_filter("autolink", |s: &str| Value::from_safe_string(format!("<{s}>")));
    env.add_filter("fenced", |s: &str| {
        let fence = md::fence_for(s);
        Value::from_safe_string(format!("{fence}\n{s}{fence}"))
    });
    env.add_filter("shell", |s: &str| Value::from_safe_string(shell::word(s)));
    env.add_filter("shell_in_single_quotes", |s: &str| Value::from_safe_string(shell::in_single_quotes(s)));
    for (name, source) in TEMPLATES {
        env.add_template(name, source).unwrap_or_else(|e| panic!("template {name} does not parse: {e:#}"));
    }
    env
});

/// Renders template `name` with `context`. The templates are part of the
/// program, so a failure is a bug (exit 2), found by the tests that render
/// every branch.
pub(crate) fn render(name: &str, context: &impl Serialize) -> String {
    ENV.get_template(name)
        .and_then(|t| t.render(Value::from(minijinja::value::Serde(context))))
        .unwrap_or_else(|e| panic!("template {name}: {e:#}"))
}

/// Renders the blocks `names` of template `name` with `context`, each on its
/// own; a name the template has no block for gives `None`.
pub(crate) fn render_blocks(name: &str, context: &impl Serialize, names: &[&str]) -> Vec<Option<String>> {
    let template = ENV.get_template(name).unwrap_or_else(|e| panic!("template {name}: {e:#}"));
    let mut captured = template
        .render_captured(Value::from(minijinja::value::Serde(context)))
        .unwrap_or_else(|e| panic!("template {name}: {e:#}"));
    captured.with_state_mut(|state| {
        names
            .iter()
            .map(|block| match state.render_block(block) {
                Ok(text) => Some(text),
                Err(e) if e.kind() == ErrorKind::UnknownBlock => None,
                Err(e) => panic!("template {name}, block {block}: {e:#}"),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_markdown_literals_unless_a_filter_says_otherwise() {
        let env = &*ENV;
        let out = env
            .render_str(
                "{{ s }} {{ s|code }} {{ s|safe }} {{ n }} {{ r|pct }} {{ t|number }} {{ l|map('code')|join(', ') }}",
                minijinja::context! { s => "*a*", n => 3, r => 0.1234, t => 0.95, l => ["x", "y`"] },
            )
            .unwrap();
        assert_eq!(out, "\\*a\\* `*a*` *a* 3 12.3% 0.95 `x`, `` y` ``");
        let err = env.render_str("{{ r }}", minijinja::context! { r => 0.5 }).unwrap_err();
        assert!(err.to_string().contains("0.5 (number) is printed without a filter that says how"), "{err}");
        let err = env.render_str("{{ nothing }}", minijinja::context! {}).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UndefinedError);
    }
}
