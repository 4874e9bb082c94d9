//! Trees: the node layout, growing a forest of them (bootstrap weights, one seeded
//! stream per tree) and walking them to predict.

use super::*;

/// One fitted tree, nodes in creation order with the root first.
#[derive(Debug, Clone)]
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    /// Leaf outputs, `width` values per leaf.
    pub(super) outputs: Vec<f64>,
    /// Unnormalised impurity decrease per feature.
    pub(super) importances: Vec<f64>,
}

/// A tree node in 8 bytes, so that prediction walks half the memory. `link` is a
/// split's left child, its right child being the next node, or a leaf's output offset;
/// `word` packs a split's feature (bits 0-21), threshold (22-29) and missing-left flag
/// (30); bit 31 marks a leaf.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub(super) link: u32,
    pub(super) word: u32,
}

/// Features a tree can split on: a node keeps 22 bits of feature index.
pub(super) const MAX_TREE_FEATURES: usize = 1 << 22;
pub(super) const LEAF_BIT: u32 = 1 << 31;
pub(super) const MISSING_LEFT_BIT: u32 = 1 << 30;
pub(super) const THRESHOLD_SHIFT: u32 = 22;

/// What a [`Node`] holds.
#[derive(Debug, Clone, Copy)]
pub(super) enum NodeView {
    Split {
        feature: u32,
        /// Observed bins `<= threshold` go left.
        threshold: u8,
        /// Where [`MISSING_BIN`] goes.
        missing_left: bool,
        left: u32,
        right: u32,
    },
    Leaf {
        /// Offset of the leaf's outputs in `Tree::outputs`.
        output: u32,
    },
}

impl Node {
    pub(super) fn leaf(output: u32) -> Node {
        Node { link: output, word: LEAF_BIT }
    }

    /// A split whose children are nodes `left` and `left + 1`.
    pub(super) fn split(feature: usize, threshold: u8, missing_left: bool, left: u32) -> Node {
        debug_assert!(feature < MAX_TREE_FEATURES);
        let flag = if missing_left { MISSING_LEFT_BIT } else { 0 };
        Node { link: left, word: feature as u32 | u32::from(threshold) << THRESHOLD_SHIFT | flag }
    }

    #[inline(always)]
    pub(super) fn view(self) -> NodeView {
        if self.word & LEAF_BIT != 0 {
            NodeView::Leaf { output: self.link }
        } else {
            NodeView::Split {
                feature: self.word & (MAX_TREE_FEATURES as u32 - 1),
                threshold: (self.word >> THRESHOLD_SHIFT) as u8,
                missing_left: self.word & MISSING_LEFT_BIT != 0,
                left: self.link,
                right: self.link + 1,
            }
        }
    }
}

#[inline]
pub(super) fn goes_left(bin: u8, threshold: u8, missing_left: bool) -> bool {
    if bin == MISSING_BIN { missing_left } else { bin <= threshold }
}

impl Tree {
    /// Outputs of the leaf a row with bins `bins` falls in.
    #[cfg(test)]
    pub(super) fn leaf(&self, bins: &[u8], width: usize) -> &[f64] {
        let mut node = 0;
        loop {
            match self.nodes[node].view() {
                NodeView::Leaf { output } => {
                    let start = output as usize;
                    return &self.outputs[start..start + width];
                }
                NodeView::Split { feature, threshold, missing_left, left, right } => {
                    let bin = bins[feature as usize];
                    node = if goes_left(bin, threshold, missing_left) { left } else { right } as usize;
                }
            }
        }
    }
}

/// [`ForestParams`] with scikit-learn's lower bounds applied and features resolved.
pub(super) struct Limits {
    pub(super) max_features: usize,
    pub(super) min_samples_leaf: usize,
    pub(super) min_samples_split: usize,
    pub(super) max_depth: usize,
    /// Whether histograms count rows: needed for `min_samples_leaf > 1`, and when weights
    /// are not integers, whose sums are then not exact (a bin emptied by subtraction
    /// must be told apart from rounding residue).
    pub(super) counts: bool,
    /// Whether every row weight is an integer, so that node statistics and split scores
    /// are exact.
    pub(super) integer_weights: bool,
    /// Largest node whose subtree is grown on local rows: `LOCAL_ROWS`, or 0 (never)
    /// in the test that this changes nothing.
    pub(super) local_rows: usize,
}

pub(super) fn grow_forest<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
) -> Vec<Tree> {
    grow_forest_marked(x, criterion, sample_weight, params, Speedups::ALL, None)
        .into_iter()
        .map(|(tree, _)| tree)
        .collect()
}

/// Shortcuts that must not change a tree: always on, but in the tests that say so.
#[derive(Debug, Clone, Copy)]
pub(super) struct Speedups {
    /// Trees start knowing the columns that are constant over all of `x`.
    pub(super) premark: bool,
    /// Small subtrees are grown on local rows.
    pub(super) local: bool,
}

impl Speedups {
    pub(super) const ALL: Speedups = Speedups { premark: true, local: true };
}

/// [`grow_forest`] with the given `speedups`; with `held_out`, each tree comes with the
/// leaf (output offset) each held-out row reached.
pub(super) fn grow_forest_marked<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
    speedups: Speedups,
    held_out: Option<&BinnedMatrix>,
) -> Vec<(Tree, Vec<u32>)> {
    let grown = std::sync::Mutex::new((0..params.n_trees).map(|_| None).collect::<Vec<_>>());
    grow_each(x, criterion, sample_weight, params, speedups, held_out, |index, tree, leaves| {
        grown.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[index] = Some((tree, leaves));
    });
    let grown = grown.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    grown.into_iter().map(|tree| tree.expect("every tree index is grown once")).collect()
}

/// Grows every tree of the forest and hands each, with the leaf each held-out row
/// reached, to `each` as soon as it is grown (in no particular order; `index` says
/// which tree it is).
///
/// Trees are started in index order, one per worker, by `min(n_trees, threads)`
/// workers that each take the next index when their tree is done, so a caller that
/// keeps only what it cannot yet use holds a few trees, not the forest, whatever the
/// pool size. Each worker reuses one set of histogram stores from tree to tree: fresh
/// ones (features x bins x slots, up to megabytes) cost more page faults than small
/// trees cost to grow. Stores are zeroed before reuse, so a tree never depends on
/// which worker grew the tree before it.
pub(super) fn grow_each<C: Criterion>(
    x: &BinnedMatrix,
    criterion: &C,
    sample_weight: Option<&[f64]>,
    params: &ForestParams,
    speedups: Speedups,
    held_out: Option<&BinnedMatrix>,
    each: impl Fn(usize, Tree, Vec<u32>) + Sync,
) {
    assert!(u32::try_from(x.n_rows).is_ok(), "a forest takes at most u32::MAX rows, got {}", x.n_rows);
    assert!(x.n_cols <= MAX_TREE_FEATURES, "a forest takes at most {MAX_TREE_FEATURES} features, got {}", x.n_cols);
    if let Some(weights) = sample_weight {
        assert_eq!(weights.len(), x.n_rows, "{} sample weights for {} rows", weights.len(), x.n_rows);
        if let Some(bad) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            panic!("sample weights must be finite and non-negative, got {bad}");
        }
    }
    let integer = integer_weights(sample_weight, params.bootstrap);
    let limits = Limits {
        max_features: params.max_features.resolve(x.n_cols),
        min_samples_leaf: params.min_samples_leaf.max(1),
        min_samples_split: params.min_samples_split.max(2),
        max_depth: params.max_depth.unwrap_or(usize::MAX),
        counts: params.min_samples_leaf > 1 || !integer,
        integer_weights: integer,
        local_rows: if speedups.local { LOCAL_ROWS } else { 0 },
    };
    let mut layout = Layout::new(x, criterion.stride());
    if !speedups.premark {
        layout.constant.fill(0);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = params.n_trees.min(rayon::current_num_threads());
    (0..workers).into_par_iter().for_each(|_| {
        let mut cache: Option<Stores> = None;
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if index >= params.n_trees {
                break;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(mix(params.seed, index as u64));
            let weights = row_weights(x.n_rows, sample_weight, params.bootstrap, &mut rng);
            let stores = match cache.take() {
                Some(mut stores) => {
                    stores.reset(&layout);
                    stores
                }
                None => Stores::new(&layout),
            };
            let grower = Grower::new(x, criterion, &limits, &layout, &weights, rng, stores, held_out);
            drop(weights);
            let (tree, stores, leaves) = grower.grow();
            cache = Some(stores);
            each(index, tree, leaves);
        }
    });
}

/// Whether every row weight of every tree is an integer and their sums are exact: with
/// bootstrap (weights count draws) or without sample weights, or sample weights that
/// are small integers.
pub(super) fn integer_weights(sample_weight: Option<&[f64]>, bootstrap: bool) -> bool {
    match sample_weight {
        Some(weights) if !bootstrap => {
            weights.iter().all(|w| w.fract() == 0.0) && weights.iter().sum::<f64>() < (1u64 << 52) as f64
        }
        _ => true,
    }
}

/// The histogram stores one tree's growth needs, reusable by the next tree.
pub(super) struct Stores {
    pub(super) hist: HistStore,
    pub(super) parent_hist: HistStore,
    /// One histogram of the widest feature, reused feature after feature by the nodes
    /// that keep none.
    pub(super) work: Vec<f64>,
    /// The columns of small subtrees (`LOCAL_ROWS` bins per feature): left with no
    /// column marked copied by every tree that used it.
    pub(super) local: Local,
}

impl Stores {
    pub(super) fn new(layout: &Layout) -> Stores {
        Stores {
            hist: HistStore::new(layout),
            parent_hist: HistStore::new(layout),
            work: vec![0.0; layout.max_cells()],
            local: Local::new(layout.n_bins.len()),
        }
    }

    /// Zeroes every histogram a previous tree built (`work` is zeroed after each use).
    pub(super) fn reset(&mut self, layout: &Layout) {
        self.hist.clear(layout);
        self.parent_hist.clear(layout);
    }
}

/// Each row's weight in one tree; 0 keeps the row out of it. A bootstrap sample is n
/// draws with replacement (proportional to `sample_weight` if given, as in
/// scikit-learn 1.9) and a row weighs the number of times it was drawn.
pub(super) fn row_weights(
    n_rows: usize,
    sample_weight: Option<&[f64]>,
    bootstrap: bool,
    rng: &mut ChaCha8Rng,
) -> Vec<f64> {
    match (bootstrap, sample_weight) {
        (false, Some(weights)) => weights.to_vec(),
        (false, None) => vec![1.0; n_rows],
        (true, None) => {
            let mut counts = vec![0.0; n_rows];
            for _ in 0..n_rows {
                counts[crate::seed::random_below(rng, 0, n_rows)] += 1.0;
            }
            counts
        }
        (true, Some(weights)) => {
            let cumulative: Vec<f64> = weights
                .iter()
                .scan(0.0, |sum, w| {
                    *sum += w;
                    Some(*sum)
                })
                .collect();
            let mut counts = vec![0.0; n_rows];
            // Rounding can make a draw land on the total; it then counts for the last
            // row of positive weight, not for a trailing row of weight 0.
            if let Some(last) = weights.iter().rposition(|&w| w > 0.0) {
                let total = cumulative[last];
                for _ in 0..n_rows {
                    let u = rng.random::<f64>() * total;
                    // The first row whose cumulative weight exceeds u, so never a row of
                    // weight 0.
                    let row = cumulative.partition_point(|&c| c <= u).min(last);
                    counts[row] += 1.0;
                }
            }
            counts
        }
    }
}
