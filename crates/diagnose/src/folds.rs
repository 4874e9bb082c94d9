//! Fold assignment for TsT cross-validation (`docs/tst-protocol.md`, "Cross-validation").
//!
//! Rows arrive in canonical id order; every assignment is a pure function of
//! (labels or groups, k, seed), so it is reproducible and independent of the
//! thread count.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Stratified k-fold: each class's rows are shuffled (seeded) and dealt
/// round-robin, continuing where the previous class stopped, so every fold
/// gets a near-equal share of every class (as scikit-learn's StratifiedKFold).
pub fn stratified(labels: &[u32], k: usize, seed: u64) -> Vec<usize> {
    let mut by_class: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, &l) in labels.iter().enumerate() {
        by_class.entry(l).or_default().push(i);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fold = vec![0; labels.len()];
    let mut next = 0;
    for rows in by_class.values_mut() {
        rows.shuffle(&mut rng);
        for &i in rows.iter() {
            fold[i] = next % k;
            next += 1;
        }
    }
    fold
}

/// Shuffled k-fold (numeric targets): a seeded permutation cut into k near-equal parts.
pub fn shuffled(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut fold = vec![0; n];
    for (pos, &i) in order.iter().enumerate() {
        fold[i] = pos * k / n.max(1);
    }
    fold
}

/// Grouped k-fold: all rows of a group share a fold. Groups are shuffled
/// (seeded), then placed largest first into the fold with the fewest rows, so
/// folds stay balanced and a group never straddles train and test.
pub fn grouped(groups: &[String], k: usize, seed: u64) -> Vec<usize> {
    let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate() {
        members.entry(g.as_str()).or_default().push(i);
    }
    let mut order: Vec<(&str, Vec<usize>)> = members.into_iter().collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    // Stable: equal sizes keep their shuffled order.
    order.sort_by_key(|(_, rows)| std::cmp::Reverse(rows.len()));
    let mut sizes = vec![0usize; k];
    let mut fold = vec![0; groups.len()];
    for (_, rows) in order {
        let f = (0..k).min_by_key(|&f| (sizes[f], f)).unwrap_or(0);
        sizes[f] += rows.len();
        for i in rows {
            fold[i] = f;
        }
    }
    fold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stratified_balances_classes() {
        let labels: Vec<u32> = (0..100).map(|i| u32::from(i % 4 == 0)).collect();
        let f = stratified(&labels, 5, 42);
        for k in 0..5 {
            let n1 = (0..100).filter(|&i| f[i] == k && labels[i] == 1).count();
            let n = (0..100).filter(|&i| f[i] == k).count();
            assert_eq!((n, n1), (20, 5));
        }
        assert_eq!(f, stratified(&labels, 5, 42));
        assert_ne!(f, stratified(&labels, 5, 43));
    }

    #[test]
    fn groups_never_straddle_folds() {
        let groups: Vec<String> = (0..60).map(|i| format!("img{}", i / 6)).collect();
        let f = grouped(&groups, 5, 1);
        for g in 0..10 {
            let folds: std::collections::BTreeSet<usize> = (0..60).filter(|i| i / 6 == g).map(|i| f[i]).collect();
            assert_eq!(folds.len(), 1);
        }
        let sizes: Vec<usize> = (0..5).map(|k| f.iter().filter(|&&x| x == k).count()).collect();
        assert!(sizes.iter().all(|&s| s == 12), "{sizes:?}");
    }

    #[test]
    fn shuffled_cuts_even_parts() {
        let f = shuffled(10, 5, 0);
        assert!((0..5).all(|k| f.iter().filter(|&&x| x == k).count() == 2));
    }
}
