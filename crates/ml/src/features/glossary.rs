//! One line per feature name, for readers of the importance plots and the
//! card: what a column such as `opt3.term_gold` or `template.opt0.p_gold`
//! measures. Names are read part by part, so every column the featurizer
//! makes (any option position, slot, meta field or recipe) has a line.

/// What the feature `name` measures, in one line.
pub fn describe(name: &str) -> String {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        ["q", "chars"] => "length of the question in characters".into(),
        ["q", "words"] => "length of the question in words".into(),
        ["q", "numbers"] => "how many numbers the question holds".into(),
        ["q", "options"] => "how many options the question offers".into(),
        ["q", "context_chars"] => "length of the question's context (hint) in characters".into(),
        ["cat", "question_type"] => "the question type (label-encoded on the training folds)".into(),
        ["meta", rest @ ..] => format!("the meta field `{}` (label-encoded on the training folds)", rest.join(".")),
        ["template", "id"] => "the question's template: its text with the variable spans masked (label-encoded)".into(),
        ["template", "slots"] => "how many variable spans (slots) the question's template has".into(),
        ["opt", "position"] => "the option's position (its letter)".into(),
        ["opt", "length"] => {
            "the option's length: its characters, how many options are longer, whether it is the longest or shortest"
                .into()
        }
        [base @ .., how @ ("rank" | "gap")] if base.contains(&"opt") => relative(&base.join("."), how),
        [opt, stat] if is_option(opt) => option_stat(opt, stat),
        ["recipe", recipe, "kw", word] => format!("recipe `{recipe}`: the question contains the keyword \"{word}\""),
        ["kw", word] => format!("the question contains the keyword \"{word}\""),
        [key @ .., stat] if !key.is_empty() => keyed_stat(&key.join("."), stat),
        _ => format!("the feature `{name}`"),
    }
}

fn is_option(part: &str) -> bool {
    part == "opt" || part.strip_prefix("opt").is_some_and(|j| !j.is_empty() && j.bytes().all(|b| b.is_ascii_digit()))
}

/// The option position `opt{j}` as a letter ("option A"); `opt`, a candidate column of
/// the position-free model, is "the option".
fn option_name(opt: &str) -> String {
    match opt[3..].parse::<usize>() {
        Ok(j) => format!("option {}", crate::sample::option_letter(j)),
        Err(_) => "the option".to_string(),
    }
}

/// A relative column of the position-free model (`opt.chars.rank`, `template.opt.p_gold.gap`).
fn relative(base: &str, how: &str) -> String {
    let of = describe(base);
    match how {
        "rank" => format!("how many of the question's options rank above the option on: {of}"),
        _ => format!("the option's value minus the best of the other options on: {of}"),
    }
}

fn option_stat(opt: &str, stat: &str) -> String {
    let o = option_name(opt);
    match stat {
        "chars" => format!("length of {o} in characters"),
        "len_rank" => format!("how many options are longer than {o}"),
        "is_longest" => format!("{o} is the longest option"),
        "is_shortest" => format!("{o} is the shortest option"),
        "len_ratio" => format!("how many times longer {o} is than the longest other option"),
        "q_overlap" => format!("words {o} shares with the question"),
        "in_question" => format!("{o}'s text appears in the question or its context"),
        "number" => format!("the number {o} starts with"),
        "seen_count" => format!("how often {o}'s exact text was offered in the training folds"),
        "gold_count" => format!("how often {o}'s exact text was the gold answer in the training folds"),
        "gold_ratio" => format!("share of the training folds' offers of {o}'s text where it was the gold answer"),
        "term_gold" => format!(
            "a lexical prior: how often the words that set {o} apart from the other options were on the gold side in \
             the training folds"
        ),
        "term_gold_max" => format!(
            "a lexical prior: the gold share in the training folds of {o}'s strongest word, (gold + 1) / (offered + 2)"
        ),
        _ => format!("{o}: {stat}"),
    }
}

/// A statistic of the training questions that share a key with this one (its
/// template, a slot value, the whole question, a recipe's field).
fn keyed_stat(key: &str, stat: &str) -> String {
    let who = match key.split('.').next().unwrap_or(key) {
        "template" => "questions with the same template".to_string(),
        "question" => "questions with the same text".to_string(),
        "recipe" => format!("questions with the same `{}` value", key.trim_start_matches("recipe.")),
        k if k.starts_with("slot") => format!("questions with the same value in template {k}"),
        _ => format!("questions with the same `{key}`"),
    };
    let parts: Vec<&str> = key.split('.').collect();
    if let Some(opt) = parts.last().filter(|p| is_option(p)) {
        let base = parts[..parts.len() - 1].join(".");
        let who = keyed_stat(&base, "_who");
        let o = option_name(opt);
        return match stat {
            "p_gold" => format!("share of the training {who} whose gold was {o}'s text"),
            "is_mode" => format!("{o}'s text is the most common gold answer of the training {who}"),
            "log_dist" => format!("distance of {o}'s number from the training {who}'s gold numbers (log10 scale)"),
            _ => format!("{o}, training {who}: {stat}"),
        };
    }
    match stat {
        "_who" => who,
        "count" => format!("training {who} (how many)"),
        "mean" => format!("mean numeric answer of the training {who}"),
        "std" => format!("standard deviation of the numeric answers of the training {who}"),
        "log_mean" => format!("mean of log10(answer + 1) over the training {who}"),
        "log_std" => format!("standard deviation of log10(answer + 1) over the training {who}"),
        "p_yes" => format!("share of the training {who} answered yes"),
        "top_share" => format!("share of the most common answer among the training {who}"),
        "id" => format!("the value itself, label-encoded ({who})"),
        _ => format!("{stat} of the training {who}"),
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn every_kind_of_name_reads() {
        assert_eq!(describe("q.words"), "length of the question in words");
        assert!(describe("opt3.term_gold").starts_with("a lexical prior: how often the words that set option D apart"));
        assert_eq!(
            describe("template.opt0.p_gold"),
            "share of the training questions with the same template whose gold was option A's text"
        );
        assert_eq!(describe("template.p_yes"), "share of the training questions with the same template answered yes");
        assert_eq!(describe("meta.image_organ"), "the meta field `image_organ` (label-encoded on the training folds)");
        assert_eq!(describe("slot1.count"), "training questions with the same value in template slot1 (how many)");
        assert!(describe("recipe.all.kw.closest").contains("keyword \"closest\""));
        assert_eq!(describe("weird"), "the feature `weird`");
        // Candidate columns of the position-free model.
        assert_eq!(describe("opt.in_question"), "the option's text appears in the question or its context");
        assert!(describe("opt.q_overlap.rank").starts_with("how many of the question's options rank above the option"));
        assert!(describe("template.opt.p_gold").contains("whose gold was the option's text"));
        assert!(describe("opt.length").starts_with("the option's length"));
    }
}
