//! What the pruners share: a question's type, budgets split over types,
//! per-type counts, and scores rounded for ranking.

use std::collections::BTreeMap;

use crate::sample::Sample;

/// A question's type for floors and per-type allocation.
pub fn type_name(s: &Sample) -> &str {
    s.question_type.as_deref().unwrap_or("(no type)")
}

/// Splits `budget` over keys in proportion to their sizes (largest remainder,
/// ties to the smaller key name).
pub fn split_budget(sizes: &BTreeMap<String, usize>, budget: usize) -> BTreeMap<String, usize> {
    let total: usize = sizes.values().sum();
    if total == 0 {
        return sizes.keys().map(|k| (k.clone(), 0)).collect();
    }
    let budget = budget.min(total);
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    let mut rema: Vec<(u128, &String)> = Vec::new();
    let mut given = 0;
    for (k, &n) in sizes {
        // Exact integer arithmetic: share = budget * n / total.
        let num = budget as u128 * n as u128;
        let q = (num / total as u128) as usize;
        out.insert(k.clone(), q.min(n));
        given += q.min(n);
        rema.push((num % total as u128, k));
    }
    rema.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    for (_, k) in rema.iter().cycle().take(rema.len() * 2) {
        if given >= budget {
            break;
        }
        let cap = sizes[*k];
        let e = out.get_mut(*k).expect("key present");
        if *e < cap {
            *e += 1;
            given += 1;
        }
    }
    out
}

/// Per-type counts of a sample set.
pub(crate) fn type_counts<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for s in samples {
        *m.entry(type_name(s).to_string()).or_default() += 1;
    }
    m
}

/// A score rounded for ranking, so float noise in the last bits never decides
/// an order (ties then go by id).
pub(crate) fn rank_key(score: f64) -> i64 {
    if score.is_finite() { (score * 1e6).round() as i64 } else { i64::MIN }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_split_is_proportional_and_exact() {
        let sizes: BTreeMap<String, usize> =
            [("a".to_string(), 700), ("b".to_string(), 200), ("c".to_string(), 100)].into_iter().collect();
        let s = split_budget(&sizes, 101);
        assert_eq!(s.values().sum::<usize>(), 101);
        assert_eq!(s["a"], 71); // 70.7 gets the largest remainder
        assert_eq!(s["b"], 20);
        assert_eq!(s["c"], 10);
        // Never more than a key holds.
        let s = split_budget(&sizes, 5000);
        assert_eq!(s.values().sum::<usize>(), 1000);
    }
}
