//! The forest's unit tests.

use super::*;

/// A matrix of `n_rows` rows drawn by `row`, which gets the row's own RNG.
fn matrix(n_rows: usize, n_cols: usize, seed: u64, mut row: impl FnMut(&mut ChaCha8Rng) -> Vec<f64>) -> Matrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data: Vec<f64> = (0..n_rows).flat_map(|_| row(&mut rng)).collect();
    Matrix::new(n_rows, n_cols, data)
}

fn uniform_rows(n_rows: usize, n_cols: usize, seed: u64) -> Matrix {
    matrix(n_rows, n_cols, seed, |rng| (0..n_cols).map(|_| rng.random::<f64>()).collect())
}

fn labels(x: &Matrix, label: impl Fn(&[f64]) -> u32) -> Vec<u32> {
    (0..x.n_rows()).map(|i| label(x.row(i))).collect()
}

fn accuracy(predicted: &[u32], y: &[u32]) -> f64 {
    predicted.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64
}

/// One unbagged tree over all features: a deterministic, fully grown CART tree.
fn single_tree() -> ForestParams {
    ForestParams { n_trees: 1, max_features: MaxFeatures::All, bootstrap: false, ..ForestParams::classifier_default() }
}

fn xor(row: &[f64]) -> u32 {
    u32::from((row[0] > 0.5) != (row[1] > 0.5))
}

#[test]
fn matrix_gives_rows_and_values() {
    let x = Matrix::new(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN]);
    assert_eq!((x.n_rows(), x.n_cols()), (2, 3));
    assert_eq!(x.row(1)[..2], [4.0, 5.0]);
    assert_eq!(x.get(0, 2), 3.0);
    assert!(x.get(1, 2).is_nan());
}

#[test]
#[should_panic(expected = "needs 2 * 3 values, got 5")]
fn matrix_rejects_a_wrong_length() {
    Matrix::new(2, 3, vec![0.0; 5]);
}

#[test]
fn binner_gives_few_distinct_values_a_bin_each() {
    let values = [3.0, -1.0, 0.0, -0.0, 7.5, 3.0, f64::NAN, 7.5, 1e300, f64::NEG_INFINITY];
    let x = Matrix::new(values.len(), 1, values.to_vec());
    let binner = Binner::fit(&x);
    // Distinct: -inf, -1, 0 (both zeros), 3, 7.5, 1e300.
    assert_eq!(binner.thresholds(0).len(), 5);
    let binned = binner.transform(&x);
    assert_eq!(binned.column(0), [3, 1, 2, 2, 4, 3, MISSING_BIN, 4, 5, 0]);
    // Unseen values fall into the bin of the interval they lie in.
    let unseen = Matrix::new(3, 1, vec![-5.0, 100.0, f64::INFINITY]);
    assert_eq!(binner.transform(&unseen).column(0), [1, 4, 5]);
}

#[test]
fn binner_spreads_many_values_over_at_most_255_even_bins() {
    let x = matrix(20_000, 1, 1, |rng| vec![rng.random::<f64>().powi(3)]);
    let binner = Binner::fit(&x);
    assert_eq!(binner.thresholds(0).len(), MAX_VALUE_BINS - 1);
    let mut counts = vec![0; MAX_VALUE_BINS];
    for &bin in binner.transform(&x).column(0) {
        counts[bin as usize] += 1;
    }
    let expected = 20_000 / MAX_VALUE_BINS;
    assert!(counts.iter().all(|&c| c >= expected / 2 && c <= 2 * expected), "{counts:?}");
}

#[test]
fn binner_gives_a_heavy_value_one_bin_and_resolution_to_the_rest() {
    let x = matrix(10_000, 1, 2, |rng| vec![if rng.random::<f64>() < 0.9 { 0.0 } else { rng.random() }]);
    let thresholds = Binner::fit(&x).thresholds(0).to_vec();
    assert!(thresholds.len() > 200, "only {} thresholds", thresholds.len());
    assert!(thresholds.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn binner_handles_columns_without_values() {
    let x = Matrix::new(3, 2, vec![f64::NAN, 1.0, f64::NAN, 1.0, f64::NAN, 1.0]);
    let binner = Binner::fit(&x);
    assert!(binner.thresholds(0).is_empty() && binner.thresholds(1).is_empty());
    let binned = binner.transform(&x);
    assert_eq!(binned.column(0), [MISSING_BIN; 3]);
    assert_eq!(binned.column(1), [0; 3]);
    let empty = Binner::fit(&Matrix::new(0, 2, vec![]));
    assert_eq!(empty.transform(&x).column(1), [0; 3]);
}

#[test]
fn nodes_keep_what_they_are_given() {
    for (feature, threshold, missing_left, left) in
        [(0, 0, false, 1), (MAX_TREE_FEATURES - 1, MISSING_BIN - 1, true, u32::MAX - 1), (140, 17, true, 2)]
    {
        let NodeView::Split { feature: f, threshold: t, missing_left: m, left: l, right: r } =
            Node::split(feature, threshold, missing_left, left).view()
        else {
            panic!("a split read back as a leaf");
        };
        assert_eq!((f as usize, t, m, l, r), (feature, threshold, missing_left, left, left + 1));
    }
    for output in [0, 5, u32::MAX] {
        assert!(matches!(Node::leaf(output).view(), NodeView::Leaf { output: o } if o == output));
    }
}

#[test]
fn midpoint_separates_any_two_values() {
    let pairs = [
        (0.0, 1.0),
        (1.0, f64::from_bits(1.0f64.to_bits() + 1)),
        (f64::MIN_POSITIVE / 4.0, f64::MIN_POSITIVE / 2.0),
        (0.0, f64::from_bits(1)),
        (-f64::MAX, f64::MAX),
        (f64::MAX / 2.0, f64::MAX),
        (f64::NEG_INFINITY, 0.0),
        (0.0, f64::INFINITY),
        (f64::NEG_INFINITY, f64::INFINITY),
    ];
    for (lo, hi) in pairs {
        let t = midpoint(lo, hi);
        assert!(lo <= t && t < hi, "midpoint({lo}, {hi}) = {t}");
    }
}

#[test]
fn max_features_resolves_like_scikit_learn() {
    assert_eq!(MaxFeatures::Sqrt.resolve(30), 5);
    assert_eq!(MaxFeatures::Sqrt.resolve(1), 1);
    assert_eq!(MaxFeatures::All.resolve(7), 7);
    assert_eq!(MaxFeatures::Count(0).resolve(7), 1);
    assert_eq!(MaxFeatures::Count(99).resolve(7), 7);
    assert_eq!(MaxFeatures::Fraction(0.5).resolve(7), 3);
    assert_eq!(MaxFeatures::Fraction(f64::NAN).resolve(7), 1);
    assert_eq!(MaxFeatures::Sqrt.resolve(0), 0);
}

#[test]
fn defaults_are_scikit_learns() {
    let classifier = ForestParams::classifier_default();
    assert_eq!(classifier.n_trees, 100);
    assert_eq!(classifier.max_features, MaxFeatures::Sqrt);
    assert!(classifier.bootstrap && classifier.max_depth.is_none());
    assert_eq!((classifier.min_samples_leaf, classifier.min_samples_split), (1, 2));
    let regressor = ForestParams::regressor_default();
    assert_eq!((regressor.n_trees, regressor.max_features), (200, MaxFeatures::All));
}

#[test]
fn learns_an_xor_interaction() {
    let train = uniform_rows(2000, 4, 3);
    let test = uniform_rows(1000, 4, 4);
    let binner = Binner::fit(&train);
    let forest =
        fit_classifier(&binner.transform(&train), &labels(&train, xor), 2, None, &ForestParams::classifier_default());
    let acc = accuracy(&forest.predict(&binner.transform(&test)), &labels(&test, xor));
    assert!(acc > 0.93, "held-out accuracy {acc}");
}

#[test]
fn fits_separable_training_data_perfectly() {
    let x = uniform_rows(500, 3, 5);
    let y = labels(&x, |r| u32::from(r[0] + r[1] > 1.0) + 2 * u32::from(r[2] > 0.3));
    let binned = Binner::fit(&x).transform(&x);
    for params in [single_tree(), ForestParams::classifier_default()] {
        let forest = fit_classifier(&binned, &y, 4, None, &params);
        assert_eq!(accuracy(&forest.predict(&binned), &y), 1.0);
    }
}

#[test]
fn probabilities_are_distributions_over_the_classes() {
    let x = uniform_rows(300, 5, 6);
    let y = labels(&x, |r| (r[0] * 3.0) as u32);
    let binned = Binner::fit(&x).transform(&x);
    let forest = fit_classifier(&binned, &y, 3, None, &ForestParams::classifier_default());
    let test = Binner::fit(&x).transform(&uniform_rows(200, 5, 7));
    let proba = forest.predict_proba(&test);
    assert_eq!(proba.len(), 200 * 3);
    for row in proba.chunks_exact(3) {
        assert!(row.iter().all(|p| (0.0..=1.0).contains(p)));
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{row:?}");
    }
}

#[test]
fn regression_beats_predicting_the_mean() {
    let target = |r: &[f64]| (6.0 * r[0]).sin() * 3.0 + 2.0 * r[1];
    let train = uniform_rows(1500, 4, 8);
    let test = uniform_rows(500, 4, 9);
    let y: Vec<f64> = (0..train.n_rows()).map(|i| target(train.row(i))).collect();
    let y_test: Vec<f64> = (0..test.n_rows()).map(|i| target(test.row(i))).collect();
    let binner = Binner::fit(&train);
    let params = ForestParams { n_trees: 50, ..ForestParams::regressor_default() };
    let forest = fit_regressor(&binner.transform(&train), &y, None, &params);
    let mse = |p: &[f64]| p.iter().zip(&y_test).map(|(p, y)| (p - y) * (p - y)).sum::<f64>() / p.len() as f64;
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let forest_mse = mse(&forest.predict(&binner.transform(&test)));
    let mean_mse = mse(&vec![mean; test.n_rows()]);
    assert!(forest_mse < 0.05 * mean_mse, "forest {forest_mse} vs mean {mean_mse}");
}

#[test]
fn a_single_regression_tree_interpolates_its_training_data() {
    let x = uniform_rows(300, 2, 10);
    let y: Vec<f64> = (0..300).map(|i| x.get(i, 0) * 10.0 - x.get(i, 1)).collect();
    let binned = Binner::fit(&x).transform(&x);
    let forest = fit_regressor(&binned, &y, None, &single_tree());
    for (p, y) in forest.predict(&binned).iter().zip(&y) {
        assert!((p - y).abs() < 1e-9, "{p} vs {y}");
    }
}

#[test]
fn results_are_bit_identical_for_any_thread_count() {
    let x = matrix(3000, 8, 11, |rng| {
        (0..8).map(|j| if j == 3 && rng.random::<f64>() < 0.2 { f64::NAN } else { rng.random() }).collect()
    });
    let y = labels(&x, |r| u32::from(r[0] > 0.4) + u32::from(r[1] + r[2] > 1.2) + u32::from(r[3].is_nan()));
    let targets: Vec<f64> = (0..x.n_rows()).map(|i| x.get(i, 0) * 3.0 + x.get(i, 4)).collect();
    let binned = Binner::fit(&x).transform(&x);
    let params = ForestParams { n_trees: 24, ..ForestParams::classifier_default() };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let classifier = fit_classifier(&binned, &y, 4, None, &params);
            let regressor = fit_regressor(&binned, &targets, None, &params);
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            let importance = classifier.permutation_importance(&binned, &y, 2, 5);
            (
                bits(&classifier.predict_proba(&binned)),
                bits(classifier.feature_importances()),
                bits(&regressor.predict(&binned)),
                bits(regressor.feature_importances()),
                bits(&importance.mean),
            )
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(4));
    let reseeded = ForestParams { seed: 1, ..params };
    let other = fit_classifier(&binned, &y, 4, None, &reseeded).predict_proba(&binned);
    assert_ne!(one.0, other.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
}

#[test]
fn missingness_itself_is_learnable() {
    // Feature 0 is missing exactly for class 1; the other features are noise.
    let make = |seed| {
        let x = matrix(1000, 3, seed, |rng| {
            let class_one = rng.random::<bool>();
            vec![if class_one { f64::NAN } else { rng.random() }, rng.random(), rng.random()]
        });
        let y = labels(&x, |r| u32::from(r[0].is_nan()));
        (x, y)
    };
    let (train, y) = make(12);
    let (test, y_test) = make(13);
    let binner = Binner::fit(&train);
    let forest = fit_classifier(&binner.transform(&train), &y, 2, None, &ForestParams::classifier_default());
    assert_eq!(accuracy(&forest.predict(&binner.transform(&test)), &y_test), 1.0);
}

#[test]
fn missing_values_unseen_in_training_follow_the_larger_child() {
    let x = uniform_rows(1000, 1, 14);
    let stump = ForestParams { max_depth: Some(1), ..single_tree() };
    let binner = Binner::fit(&x);
    let nan = binner.transform(&Matrix::new(1, 1, vec![f64::NAN]));
    for (cut, majority) in [(0.8, 0), (0.2, 1)] {
        let y = labels(&x, |r| u32::from(r[0] > cut));
        let forest = fit_classifier(&binner.transform(&x), &y, 2, None, &stump);
        assert_eq!(forest.predict(&nan), [majority], "cut {cut}");
    }
}

#[test]
fn degenerate_inputs_give_trivial_forests() {
    let params = ForestParams::classifier_default();
    // No rows: uniform probabilities, regression predicts 0.
    let empty = Binner::fit(&Matrix::new(0, 2, vec![])).transform(&Matrix::new(0, 2, vec![]));
    let some = Binner::fit(&Matrix::new(0, 2, vec![])).transform(&uniform_rows(2, 2, 15));
    let forest = fit_classifier(&empty, &[], 3, None, &params);
    assert!(forest.predict_proba(&some).iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-12));
    assert_eq!(forest.predict(&some), [0, 0]);
    assert_eq!(forest.feature_importances(), [0.0, 0.0]);
    assert_eq!(fit_regressor(&empty, &[], None, &params).predict(&some), [0.0, 0.0]);
    assert!(forest.predict_proba(&empty).is_empty());

    // One class, and more classes than the labels use.
    let x = uniform_rows(50, 2, 16);
    let binned = Binner::fit(&x).transform(&x);
    let one_class = fit_classifier(&binned, &[0; 50], 1, None, &params);
    assert!(one_class.predict_proba(&binned).iter().all(|&p| p == 1.0));
    let y = labels(&x, |r| u32::from(r[0] > 0.5));
    let proba = fit_classifier(&binned, &y, 5, None, &params).predict_proba(&binned);
    assert!(proba.chunks_exact(5).all(|row| row[2..] == [0.0; 3]));

    // Nothing to split on: constant and all-missing columns, or no column at all.
    let flat = Matrix::new(50, 2, [1.0, f64::NAN].repeat(50));
    let flat = Binner::fit(&flat).transform(&flat);
    let forest = fit_classifier(&flat, &y, 2, None, &params);
    let share = y.iter().filter(|&&c| c == 1).count() as f64 / 50.0;
    let proba = forest.predict_proba(&flat);
    assert!((proba[1] - share).abs() < 0.1, "{} vs {share}", proba[1]);
    assert_eq!(forest.feature_importances(), [0.0, 0.0]);
    let no_columns = Binner::fit(&Matrix::new(50, 0, vec![])).transform(&Matrix::new(50, 0, vec![]));
    let forest = fit_classifier(&no_columns, &y, 2, None, &params);
    assert_eq!(forest.predict(&no_columns).len(), 50);
    assert!(forest.feature_importances().is_empty());
    let regressor = fit_regressor(&no_columns, &vec![2.0; 50], None, &params);
    assert_eq!(regressor.predict(&no_columns), vec![2.0; 50]);

    // No trees, no depth.
    let none = fit_classifier(&binned, &y, 2, None, &ForestParams { n_trees: 0, ..params.clone() });
    assert_eq!(none.predict_proba(&binned), vec![0.5; 100]);
    let stumpless = ForestParams { max_depth: Some(0), ..single_tree() };
    let root_only = fit_classifier(&binned, &y, 2, None, &stumpless).predict_proba(&binned);
    assert!(root_only.chunks_exact(2).all(|row| row == &root_only[..2]));
}

#[test]
#[should_panic(expected = "label 2 is not below n_classes = 2")]
fn labels_must_fit_n_classes() {
    let x = Binner::fit(&uniform_rows(3, 1, 17)).transform(&uniform_rows(3, 1, 17));
    fit_classifier(&x, &[0, 1, 2], 2, None, &single_tree());
}

#[test]
fn importances_single_out_the_informative_feature() {
    let train = uniform_rows(2000, 4, 18);
    let test = uniform_rows(1000, 4, 19);
    let rule = |r: &[f64]| u32::from(r[2] > 0.5);
    let binner = Binner::fit(&train);
    let forest =
        fit_classifier(&binner.transform(&train), &labels(&train, rule), 2, None, &ForestParams::classifier_default());
    let mdi = forest.feature_importances();
    assert!((mdi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(mdi[2] > 0.9, "{mdi:?}");

    let held_out = binner.transform(&test);
    let importance = forest.permutation_importance(&held_out, &labels(&test, rule), 5, 0);
    assert!(importance.baseline > 0.99);
    assert!(importance.mean[2] > 0.4, "{importance:?}");
    for j in [0, 1, 3] {
        assert!(importance.mean[j].abs() < 0.02, "{importance:?}");
    }
    assert!(importance.std.iter().all(|&s| s >= 0.0));
}

#[test]
fn regression_importances_rise_with_the_mse() {
    let x = uniform_rows(1000, 3, 20);
    let y: Vec<f64> = (0..1000).map(|i| 5.0 * x.get(i, 1)).collect();
    let binned = Binner::fit(&x).transform(&x);
    let params = ForestParams { n_trees: 20, ..ForestParams::regressor_default() };
    let forest = fit_regressor(&binned, &y, None, &params);
    assert!(forest.feature_importances()[1] > 0.95);
    let importance = forest.permutation_importance(&binned, &y, 3, 1);
    assert!(importance.baseline > -0.01 && importance.baseline <= 0.0);
    assert!(importance.mean[1] > 1.0 && importance.mean[0].abs() < 0.01, "{importance:?}");
}

/// With integer weights a node stops scanning features once a split reaches the
/// best possible score; with weights of 0.5 it never does (they are not integers),
/// yet halving every weight is exact and changes no comparison. The two must grow
/// the same trees: coarse features and noisy labels give many perfect splits and
/// many ties between features.
#[test]
fn stopping_at_an_unbeatable_split_changes_nothing() {
    let x = matrix(600, 12, 5, |rng| (0..12).map(|_| f64::from(rng.random_range(0..4u8))).collect());
    let y: Vec<u32> = (0..600).map(|i| (x.get(i, 0) as u32 + x.get(i, 1) as u32 + (i % 7 == 0) as u32) % 3).collect();
    let binned = Binner::fit(&x).transform(&x);
    let params = ForestParams { n_trees: 8, bootstrap: false, ..ForestParams::classifier_default() };
    let fit = |weight: f64| fit_classifier(&binned, &y, 3, Some(&vec![weight; 600]), &params);
    let (whole, halves) = (fit(1.0), fit(0.5));
    for (a, b) in whole.trees.iter().zip(&halves.trees) {
        let splits = |tree: &Tree| tree.nodes.iter().map(|n| (n.link, n.word)).collect::<Vec<_>>();
        assert!(a.nodes.len() > 100, "trees this small test little: {}", a.nodes.len());
        assert_eq!(splits(a), splits(b));
    }
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&whole.predict_proba(&binned)), bits(&halves.predict_proba(&binned)));
    assert_eq!(bits(whole.feature_importances()), bits(halves.feature_importances()));
}

#[test]
fn a_score_skipped_without_dividing_would_not_have_won() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let plain = |s: Score, best: f64| {
        let score = s.num / s.den;
        (score > best).then_some(score)
    };
    let mut cases = vec![
        (Score { num: 1.0, den: 0.0 }, 2.0),
        (Score { num: 0.0, den: 0.0 }, 2.0),
        (Score { num: -1.0, den: 2.0 }, -3.0),
        (Score { num: f64::NAN, den: 1.0 }, 1.0),
        (Score { num: 3.0, den: 1.0 }, f64::NEG_INFINITY),
        (Score { num: 3.0, den: 1.0 }, 3.0),
    ];
    for _ in 0..100_000 {
        // Integer sums as bootstrap weights make them, then near-ties: `best` within a
        // few ulps of the quotient, or the quotient of another split.
        let den = f64::from(rng.random_range(1..10_000u32)) * f64::from(rng.random_range(1..10_000u32));
        let num = f64::from(rng.random_range(0..1u32 << 30)) * f64::from(rng.random_range(1..64u32));
        let quotient = num / den;
        let best = match rng.random_range(0..4u8) {
            0 => quotient,
            1 => f64::from_bits(quotient.to_bits().wrapping_add(rng.random_range(0..8))),
            2 => f64::from_bits(quotient.to_bits().wrapping_sub(rng.random_range(0..8))),
            _ => quotient * (1.0 + (rng.random::<f64>() - 0.5) * 1e-9),
        };
        cases.push((Score { num, den }, best));
    }
    for (score, best) in cases {
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        assert_eq!(bits(score.above(best)), bits(plain(score, best)), "{} / {} against {best}", score.num, score.den);
    }
}

#[test]
fn constant_columns_marked_up_front_change_nothing() {
    // Columns 1, 4 and 6 are constant (6 all missing); the others vary.
    let x = matrix(500, 7, 9, |rng| {
        let v = |rng: &mut ChaCha8Rng| f64::from(rng.random_range(0..5u8));
        vec![v(rng), 3.0, v(rng), v(rng), -1.0, v(rng), f64::NAN]
    });
    let y: Vec<u32> = (0..500).map(|i| (x.get(i, 0) as u32 + x.get(i, 3) as u32 + (i % 5 == 0) as u32) % 3).collect();
    let binned = Binner::fit(&x).transform(&x);
    assert_eq!(constant_columns(&binned), vec![0b101_0010]);
    let params = ForestParams { n_trees: 8, seed: 3, ..ForestParams::classifier_default() };
    let criterion = Gini { y: &y, n_classes: 3 };
    let marked = grow_forest_marked(&binned, &criterion, None, &params, Speedups::ALL, None);
    let unmarked = Speedups { premark: false, ..Speedups::ALL };
    let found = grow_forest_marked(&binned, &criterion, None, &params, unmarked, None);
    let splits = |tree: &Tree| tree.nodes.iter().map(|n| (n.link, n.word)).collect::<Vec<_>>();
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    for ((a, _), (b, _)) in marked.iter().zip(&found) {
        assert!(a.nodes.len() > 50, "trees this small test little: {}", a.nodes.len());
        assert_eq!(splits(a), splits(b));
        assert_eq!(bits(&a.outputs), bits(&b.outputs));
        assert_eq!(bits(&a.importances), bits(&b.importances));
    }
}

#[test]
fn rows_of_weight_zero_are_ignored() {
    let x = uniform_rows(400, 3, 21);
    let y = labels(&x, |r| u32::from(r[0] > 0.5));
    let weights: Vec<f64> = (0..400).map(|i| if i % 4 == 0 { 0.0 } else { 1.0 + (i % 3) as f64 }).collect();
    let scrambled: Vec<u32> = y.iter().enumerate().map(|(i, &c)| if i % 4 == 0 { 1 - c } else { c }).collect();
    let binned = Binner::fit(&x).transform(&x);
    for bootstrap in [true, false] {
        let params = ForestParams { n_trees: 10, bootstrap, ..ForestParams::classifier_default() };
        let clean = fit_classifier(&binned, &y, 2, Some(&weights), &params).predict_proba(&binned);
        let noisy = fit_classifier(&binned, &scrambled, 2, Some(&weights), &params).predict_proba(&binned);
        assert_eq!(clean, noisy, "bootstrap {bootstrap}");
    }
}

#[test]
fn leaves_keep_min_samples_leaf_rows() {
    let x = uniform_rows(500, 3, 22);
    let y = labels(&x, xor);
    let binned = Binner::fit(&x).transform(&x);
    let params = ForestParams { min_samples_leaf: 20, ..single_tree() };
    let forest = fit_classifier(&binned, &y, 2, None, &params);
    let tree = &forest.trees[0];
    let mut rows_per_leaf = std::collections::HashMap::new();
    for row in 0..binned.n_rows() {
        let bins: Vec<u8> = (0..binned.n_cols()).map(|j| binned.get(row, j)).collect();
        let leaf = tree.leaf(&bins, 2).as_ptr();
        *rows_per_leaf.entry(leaf).or_insert(0) += 1;
    }
    assert!(rows_per_leaf.len() > 5);
    assert!(rows_per_leaf.values().all(|&n| n >= 20), "{:?}", rows_per_leaf.values());
}

/// Weighted impurity of the children of a split of all rows, by brute force.
fn children_impurity(
    binned: &BinnedMatrix,
    y: &[f64],
    classes: bool,
    feature: usize,
    threshold: u8,
    missing_left: bool,
) -> f64 {
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for (row, &bin) in binned.column(feature).iter().enumerate() {
        if goes_left(bin, threshold, missing_left) {
            left.push(y[row]);
        } else {
            right.push(y[row]);
        }
    }
    let impurity = |side: &[f64]| {
        let n = side.len() as f64;
        if classes {
            let ones = side.iter().filter(|&&v| v == 1.0).count() as f64;
            n * (1.0 - (ones / n).powi(2) - (1.0 - ones / n).powi(2))
        } else {
            let mean = side.iter().sum::<f64>() / n;
            side.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>()
        }
    };
    if left.is_empty() || right.is_empty() { f64::INFINITY } else { impurity(&left) + impurity(&right) }
}

#[test]
fn the_root_split_is_the_best_of_all_splits() {
    for seed in 0..20 {
        let x = matrix(200, 3, 100 + seed, |rng| {
            (0..3)
                .map(|_| if rng.random::<f64>() < 0.15 { f64::NAN } else { (rng.random::<f64>() * 12.0).floor() })
                .collect()
        });
        let binned = Binner::fit(&x).transform(&x);
        let classes: Vec<u32> = labels(&x, |r| u32::from(r[0].is_nan() || r[1] + r[2] > 12.0));
        let numbers: Vec<f64> =
            (0..200).map(|i| x.get(i, 1).max(3.0) + if x.get(i, 2).is_nan() { 5.0 } else { 0.0 }).collect();
        let stump = ForestParams { max_depth: Some(1), ..single_tree() };
        let classifier = fit_classifier(&binned, &classes, 2, None, &stump);
        let regressor = fit_regressor(&binned, &numbers, None, &stump);
        let as_f64: Vec<f64> = classes.iter().map(|&c| f64::from(c)).collect();
        for (tree, y, is_classes) in [(&classifier.trees[0], &as_f64, true), (&regressor.trees[0], &numbers, false)] {
            let NodeView::Split { feature, threshold, missing_left, .. } = tree.nodes[0].view() else {
                panic!("seed {seed}: the root did not split");
            };
            let chosen = children_impurity(&binned, y, is_classes, feature as usize, threshold, missing_left);
            let mut best = f64::INFINITY;
            for feature in 0..3 {
                for threshold in 0..MISSING_BIN {
                    for missing_left in [false, true] {
                        best = best.min(children_impurity(&binned, y, is_classes, feature, threshold, missing_left));
                    }
                }
            }
            assert!(chosen <= best + 1e-9, "seed {seed}: chose {chosen}, best is {best}");
        }
    }
}

#[test]
fn subtracting_a_sibling_histogram_equals_building_directly() {
    let x = matrix(300, 1, 23, |rng| vec![if rng.random::<f64>() < 0.1 { f64::NAN } else { rng.random() }]);
    let y: Vec<u32> = (0..300).map(|i| (i % 3) as u32).collect();
    let binned = Binner::fit(&x).transform(&x);
    let criterion = Gini { y: &y, n_classes: 3 };
    let rows: Vec<u32> = (0..300).collect();
    let samples: Vec<_> =
        rows.iter().map(|&r| Sample { weight: 1.0 + f64::from(r % 2), target: y[r as usize] }).collect();
    let (small, large) = (100, 100..300);
    let layout = Layout::new(&binned, criterion.stride());
    let width = layout.width;
    // Built in one pass, or in two halves (alternate rows) added up, as large nodes
    // with integer weights do: the same cells, and the spare half left zeroed.
    for (counts, paired) in [(true, false), (false, false), (true, true), (false, true)] {
        let build = |rows: &[u32], samples: &[Sample<u32>]| {
            let mut store = HistStore::new(&layout);
            let mut spare = vec![0.0; layout.max_cells()];
            let cells = store.take(&layout, 0);
            let half = paired.then_some(&mut spare[..]);
            build_hist::<_, 0>(&criterion, width, counts, cells, binned.column(0), rows, samples, half);
            assert!(spare.iter().all(|&v| v == 0.0));
            cells.to_vec()
        };
        let parent = build(&rows, &samples);
        let mut derived = build(&rows[..small], &samples[..small]);
        subtract_hist::<Gini>(&mut derived, &parent, width, counts);
        let direct = build(&rows[large.clone()], &samples[large.clone()]);
        assert_eq!(derived, direct, "counts {counts}, paired {paired}");
        assert!(parent.chunks_exact(width).filter(|cell| cell[2..].iter().sum::<f64>() > 0.0).count() > 10);
    }
}

#[test]
fn scoring_while_growing_matches_fitting_then_predicting() {
    // Held-out rows with missing values where training had none (column 1) and where
    // it had some (column 3), and bins no training row took.
    let with_gaps = |seed, missing_in: &'static [usize]| {
        matrix(2500, 6, seed, move |rng| {
            (0..6)
                .map(|j| if missing_in.contains(&j) && rng.random::<f64>() < 0.15 { f64::NAN } else { rng.random() })
                .collect()
        })
    };
    let train = with_gaps(21, &[3]);
    let held_out = with_gaps(22, &[1, 3]);
    let y = labels(&train, |r| u32::from(r[0] > 0.3) + u32::from(r[1] + r[2] > 1.0) + u32::from(r[3].is_nan()));
    let targets: Vec<f64> = (0..train.n_rows()).map(|i| train.get(i, 0) * 2.0 - train.get(i, 2)).collect();
    let binner = Binner::fit(&train);
    let (bx, bh) = (binner.transform(&train), binner.transform(&held_out));
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    for params in [
        ForestParams { n_trees: 12, seed: 4, ..ForestParams::classifier_default() },
        ForestParams { n_trees: 3, seed: 5, min_samples_leaf: 3, ..ForestParams::classifier_default() },
        ForestParams { n_trees: 0, ..ForestParams::classifier_default() },
    ] {
        let forest = fit_classifier(&bx, &y, 4, None, &params);
        let scored = fit_classifier_scored(&bx, &y, 4, None, &params, &bh, 0);
        assert_eq!(bits(&scored.predictions), bits(&forest.predict_proba(&bh)), "{params:?}");
        assert_eq!(bits(&scored.importances), bits(forest.feature_importances()));
        let regressor = fit_regressor(&bx, &targets, None, &params);
        let scored = fit_regressor_scored(&bx, &targets, None, &params, &bh, 0);
        assert_eq!(bits(&scored.predictions), bits(&regressor.predict(&bh)), "{params:?}");
        assert_eq!(bits(&scored.importances), bits(regressor.feature_importances()));
    }
}

#[test]
fn growing_small_subtrees_on_local_rows_changes_nothing() {
    // Enough rows for subtrees both above and below `LOCAL_ROWS`, columns of few and of
    // many bins, and missing values; classifier and regressor, with and without
    // bootstrap, integer and fractional weights.
    let x = matrix(3000, 7, 31, |rng| {
        (0..7)
            .map(|j| match j {
                0 | 1 => f64::from(rng.random_range(0..3u8)),
                2 if rng.random::<f64>() < 0.2 => f64::NAN,
                _ => rng.random(),
            })
            .collect()
    });
    let y = labels(&x, |r| (r[0] as u32 + u32::from(r[3] > 0.5) + u32::from(r[2].is_nan())) % 3);
    let targets: Vec<f64> = (0..x.n_rows()).map(|i| x.get(i, 3) + x.get(i, 1)).collect();
    let binned = Binner::fit(&x).transform(&x);
    let fractional: Vec<f64> = (0..x.n_rows()).map(|i| 0.5 + (i % 3) as f64 * 0.25).collect();
    let splits = |tree: &Tree| tree.nodes.iter().map(|n| (n.link, n.word)).collect::<Vec<_>>();
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let no_local = Speedups { local: false, ..Speedups::ALL };
    for (bootstrap, weights) in [(true, None), (false, None), (false, Some(&fractional[..]))] {
        let params = ForestParams { n_trees: 6, seed: 9, bootstrap, ..ForestParams::classifier_default() };
        let gini = Gini { y: &y, n_classes: 3 };
        let squared = SquaredError { y: &targets };
        let pairs = [
            (
                grow_forest_marked(&binned, &gini, weights, &params, Speedups::ALL, Some(&binned)),
                grow_forest_marked(&binned, &gini, weights, &params, no_local, Some(&binned)),
            ),
            (
                grow_forest_marked(&binned, &squared, weights, &params, Speedups::ALL, Some(&binned)),
                grow_forest_marked(&binned, &squared, weights, &params, no_local, Some(&binned)),
            ),
        ];
        for (local, global) in pairs {
            for ((a, leaves_a), (b, leaves_b)) in local.iter().zip(&global) {
                assert!(a.nodes.len() > 2 * LOCAL_ROWS / 10, "trees this small test little: {}", a.nodes.len());
                assert_eq!(splits(a), splits(b), "bootstrap {bootstrap}, weights {}", weights.is_some());
                assert_eq!(bits(&a.outputs), bits(&b.outputs));
                assert_eq!(bits(&a.importances), bits(&b.importances));
                assert_eq!(leaves_a, leaves_b);
            }
        }
    }
}

#[test]
fn trees_added_out_of_order_sum_as_in_tree_order() {
    // Three trees of two leaves over four held-out rows, width 2; values chosen so that
    // a different order of addition rounds differently.
    let outputs = [vec![0.1, 0.9, 1e16, -1e16], vec![0.7, 0.3, 1.0, 3.0], vec![-1e16, 1e16, 0.2, 0.8]];
    let leaves = [vec![0, 2, 2, 0], vec![2, 0, 0, 2], vec![0, 0, 2, 2]];
    let sums_in = |order: &[usize]| {
        let mut sums = TreeOrderSums::new(4, 2, 3);
        for &t in order {
            sums.add(t, &outputs[t], &leaves[t], Some(vec![t as f64]));
        }
        sums
    };
    let in_order = sums_in(&[0, 1, 2]);
    assert_eq!(in_order.most_waiting, 0);
    let mut expected = vec![0.0; 8];
    for t in 0..3 {
        for (row, &leaf) in leaves[t].iter().enumerate() {
            for c in 0..2 {
                expected[row * 2 + c] += outputs[t][leaf as usize + c];
            }
        }
    }
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&in_order.sums), bits(&expected));
    for order in [[2, 1, 0], [1, 2, 0], [2, 0, 1], [1, 0, 2]] {
        let sums = sums_in(&order);
        assert_eq!(bits(&sums.sums), bits(&expected), "order {order:?}");
        assert_eq!(sums.importances, in_order.importances);
        assert!(sums.waiting.is_empty());
    }
    assert_eq!(sums_in(&[2, 1, 0]).most_waiting, 2);
}

#[test]
fn a_scored_fit_on_one_thread_keeps_one_tree_at_a_time() {
    // Trees reach the sums in the order they were started; on one thread that is tree
    // order, so none waits: the fit holds the tree being grown, not the forest.
    let x = uniform_rows(2000, 6, 41);
    let y = labels(&x, |r| u32::from(r[0] > 0.5) + u32::from(r[1] > 0.3));
    let binned = Binner::fit(&x).transform(&x);
    let params = ForestParams { n_trees: 16, ..ForestParams::classifier_default() };
    let gini = Gini { y: &y, n_classes: 3 };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let most_waiting = pool.install(|| {
        let sums = std::sync::Mutex::new(TreeOrderSums::new(binned.n_rows, 3, params.n_trees));
        grow_each(&binned, &gini, None, &params, Speedups::ALL, Some(&binned), |index, tree, leaves| {
            sums.lock().unwrap().add(index, &tree.outputs, &leaves, None);
        });
        sums.into_inner().unwrap().most_waiting
    });
    assert_eq!(most_waiting, 0);
}

#[test]
fn scored_fits_are_bit_identical_for_any_thread_count() {
    let x = matrix(3000, 8, 12, |rng| {
        (0..8).map(|j| if j == 2 && rng.random::<f64>() < 0.2 { f64::NAN } else { rng.random() }).collect()
    });
    let y = labels(&x, |r| u32::from(r[0] > 0.4) + u32::from(r[1] + r[2] > 1.2) + u32::from(r[3] > 0.8));
    let targets: Vec<f64> = (0..x.n_rows()).map(|i| x.get(i, 0) * 3.0 + x.get(i, 4)).collect();
    let held_out = uniform_rows(700, 8, 13);
    let binner = Binner::fit(&x);
    let (bx, bh) = (binner.transform(&x), binner.transform(&held_out));
    let params = ForestParams { n_trees: 24, ..ForestParams::classifier_default() };
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let classes = fit_classifier_scored(&bx, &y, 4, None, &params, &bh, 0);
            let numbers = fit_regressor_scored(&bx, &targets, None, &params, &bh, 0);
            [classes.predictions, classes.importances, numbers.predictions, numbers.importances].map(|v| bits(&v))
        })
    };
    let one = run(1);
    for threads in [2, 3, 16] {
        assert_eq!(one, run(threads), "{threads} threads");
    }
}

#[test]
fn the_first_trees_of_a_scored_fit_are_the_smaller_forest() {
    let x = matrix(1500, 6, 17, |rng| {
        (0..6).map(|j| if j == 1 && rng.random::<f64>() < 0.1 { f64::NAN } else { rng.random() }).collect()
    });
    let y = labels(&x, |r| u32::from(r[0] > 0.5) + u32::from(r[2] + r[3] > 1.1));
    let targets: Vec<f64> = (0..x.n_rows()).map(|i| x.get(i, 0) * 2.0 + x.get(i, 5)).collect();
    let held_out = uniform_rows(300, 6, 18);
    let binner = Binner::fit(&x);
    let (bx, bh) = (binner.transform(&x), binner.transform(&held_out));
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let params = ForestParams { n_trees: 20, seed: 9, ..ForestParams::classifier_default() };
    let small = ForestParams { n_trees: 7, ..params };
    // Trees arrive out of order on several threads; the first seven are summed alone.
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let full = fit_classifier_scored(&bx, &y, 3, None, &params, &bh, 7);
            let alone = fit_classifier_scored(&bx, &y, 3, None, &small, &bh, 0);
            assert_eq!(bits(&full.first), bits(&alone.predictions), "{threads} threads");
            assert_ne!(bits(&full.first), bits(&full.predictions));
            let full = fit_regressor_scored(&bx, &targets, None, &params, &bh, 7);
            let alone = fit_regressor_scored(&bx, &targets, None, &small, &bh, 0);
            assert_eq!(bits(&full.first), bits(&alone.predictions), "{threads} threads");
        });
    }
    // Not asked for, or no fewer than the forest's trees: nothing.
    for first in [0, 20, 30] {
        assert!(fit_classifier_scored(&bx, &y, 3, None, &params, &bh, first).first.is_empty());
    }
}
