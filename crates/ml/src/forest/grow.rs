//! Growing one tree: the depth-first grower over in-place partitioned rows,
//! candidate features per node, constant columns, and node statistics.

use super::*;

/// The best split of a node found so far.
#[derive(Debug, Clone, Copy)]
pub(super) struct Split {
    pub(super) feature: usize,
    pub(super) threshold: u8,
    pub(super) missing_left: bool,
    /// Whether the node has rows with a missing value of `feature`; if not,
    /// `missing_left` is settled once the rows are partitioned.
    pub(super) missing_seen: bool,
    pub(super) score: f64,
}

/// A node waiting to be grown: its rows are `Grower::rows[rows]`.
pub(super) struct Task {
    pub(super) rows: Range<usize>,
    pub(super) depth: usize,
    pub(super) node: usize,
    /// Feature the parent split on, whose importance this node's impurity is taken from.
    pub(super) parent_feature: Option<usize>,
    /// Offset in `Grower::constant_sets` of the bitset of features known to be constant
    /// in this node (found so in an ancestor).
    pub(super) constant: usize,
    /// For the larger child only: the smaller sibling's rows. The larger child is grown
    /// right after its parent, while the parent's histograms are still in
    /// `Grower::parent_hist`, so a shared feature costs a pass over the sibling only.
    pub(super) sibling: Option<Range<usize>>,
    /// The held-out rows that reach this node: `Grower::held_out.rows[held_out]`.
    pub(super) held_out: Range<usize>,
}

/// Where each feature's histogram sits in a [`HistStore`]. A histogram has one bin per
/// bin code up to the largest the feature takes in the training matrix, then one for
/// missing values, and `width` cells per bin: the number of rows, then the criterion's
/// slots. A feature with few distinct values thus has a histogram of a few bins, cheap
/// to clear and to scan.
pub(super) struct Layout {
    /// Cells per bin: 1 + the criterion's stride.
    pub(super) width: usize,
    /// Per feature, the number of bins of its histogram (the missing bin included).
    pub(super) n_bins: Vec<usize>,
    /// Per feature, the offset of its histogram's cells; the total comes last.
    pub(super) offsets: Vec<usize>,
    /// The features constant over every row, which every tree's root starts from
    /// (see [`constant_columns`]).
    pub(super) constant: Vec<u64>,
}

impl Layout {
    pub(super) fn new(x: &BinnedMatrix, stride: usize) -> Layout {
        let width = 1 + stride;
        let n_bins: Vec<usize> = (0..x.n_cols)
            .map(|j| {
                x.column(j).iter().filter(|&&bin| bin != MISSING_BIN).max().map_or(0, |&max| usize::from(max) + 1) + 1
            })
            .collect();
        let offsets = std::iter::once(0)
            .chain(n_bins.iter().scan(0, |end, n| {
                *end += n * width;
                Some(*end)
            }))
            .collect();
        Layout { width, n_bins, offsets, constant: constant_columns(x) }
    }

    pub(super) fn cells(&self, feature: usize) -> Range<usize> {
        self.offsets[feature]..self.offsets[feature + 1]
    }

    pub(super) fn max_cells(&self) -> usize {
        self.n_bins.iter().max().map_or(0, |n| n * self.width)
    }
}

/// Buffers reused by every split scan of a tree.
pub(super) struct Scratch {
    /// Statistics of the node's rows with a missing value.
    pub(super) missing: Vec<f64>,
    /// Per missing-value direction, the left statistics of a feature's best split.
    pub(super) left: [Vec<f64>; 2],
    /// Statistics of the best split's left child and of the node.
    pub(super) best_left: Vec<f64>,
    pub(super) best_total: Vec<f64>,
}

/// Grows one tree depth-first over buffers of in-bag row indices and their samples that
/// every split partitions in place, so a node's rows are always one contiguous range.
pub(super) struct Grower<'a, C: Criterion> {
    pub(super) x: &'a BinnedMatrix,
    pub(super) criterion: &'a C,
    pub(super) limits: &'a Limits,
    pub(super) rng: ChaCha8Rng,
    pub(super) rows: Vec<u32>,
    pub(super) samples: Vec<Sample<C::Target>>,
    /// This node's histograms, per feature, when its children may subtract from them.
    pub(super) hist: HistStore,
    /// The parent's, while its larger child is grown.
    pub(super) parent_hist: HistStore,
    /// A single histogram, reused feature after feature by smaller nodes.
    pub(super) work: Vec<f64>,
    pub(super) layout: &'a Layout,
    pub(super) feature_order: Vec<usize>,
    /// Arena of bitsets of constant features, one word per 64 features; see `Task`.
    pub(super) constant_sets: Vec<u64>,
    pub(super) scratch: Scratch,
    pub(super) scan: C::Scan,
    /// Scratch space of `partition`.
    pub(super) spare: Vec<(u32, Sample<C::Target>)>,
    pub(super) totals: Vec<f64>,
    pub(super) tree: Tree,
    /// Rows routed down the tree as it grows, if any.
    pub(super) held_out: HeldOut<'a>,
    /// The columns of the small subtree being grown, if any.
    pub(super) local: Local,
}

/// Rows of a small subtree, renumbered `0..n` (in their order, which is their order in
/// the matrix), with each column copied out for them the first time the subtree reads
/// it. Deep in a tree a node's rows are spread over the whole training matrix, so every
/// bin read is a cache miss, and the subtree below reads the same few columns level
/// after level; the copies (a few hundred bytes each) stay in L1. The bins, and
/// everything computed from them, are those of the matrix.
pub(super) struct Local {
    /// Whether a subtree is being grown on local rows, and the stack depth it started at.
    pub(super) active: Option<usize>,
    /// Matrix row of each local row.
    pub(super) rows: Vec<u32>,
    /// `LOCAL_ROWS` codes per column; a column's first `rows.len()` once copied.
    pub(super) bins: Vec<u8>,
    pub(super) copied: Vec<bool>,
    pub(super) copied_list: Vec<usize>,
}

impl Local {
    pub(super) fn new(n_cols: usize) -> Self {
        Local {
            active: None,
            rows: Vec::with_capacity(LOCAL_ROWS),
            bins: vec![0; n_cols * LOCAL_ROWS],
            copied: vec![false; n_cols],
            copied_list: Vec::new(),
        }
    }

    /// Renumbers `rows` (matrix rows, increasing) to `0..rows.len()` for the subtree
    /// whose tasks are pushed above stack depth `depth`.
    pub(super) fn enter(&mut self, rows: &mut [u32], depth: usize) {
        debug_assert!(rows.len() <= LOCAL_ROWS);
        self.rows.clear();
        self.rows.extend_from_slice(rows);
        rows.iter_mut().zip(0..).for_each(|(row, local)| *row = local);
        self.active = Some(depth);
    }

    pub(super) fn leave(&mut self) {
        self.active = None;
        while let Some(feature) = self.copied_list.pop() {
            self.copied[feature] = false;
        }
    }
}

/// The column `feature` as the rows in `Grower::rows` number it: the matrix's, or the
/// local copy while a small subtree is grown.
#[inline]
pub(super) fn column_of<'c>(x: &'c BinnedMatrix, local: &'c mut Local, feature: usize) -> &'c [u8] {
    if local.active.is_none() {
        return x.column(feature);
    }
    let n = local.rows.len();
    let out = &mut local.bins[feature * LOCAL_ROWS..][..n];
    if !local.copied[feature] {
        let column = x.column(feature);
        out.iter_mut().zip(&local.rows).for_each(|(bin, &row)| *bin = column[row as usize]);
        local.copied[feature] = true;
        local.copied_list.push(feature);
    }
    out
}

/// Rows of another matrix (held-out rows) sent down a tree while it grows: a split
/// partitions them as it partitions the training rows, and a leaf records itself as
/// the leaf of each that reaches it. This is the walk prediction would make, without
/// fetching the tree's nodes again.
pub(super) struct HeldOut<'a> {
    pub(super) x: Option<&'a BinnedMatrix>,
    /// Row indices of `x`, partitioned in place so that a node's are one range.
    pub(super) rows: Vec<u32>,
    /// Per row of `x`, the output offset of the leaf it reached.
    pub(super) leaf: Vec<u32>,
    pub(super) spare: Vec<u32>,
}

impl<'a> HeldOut<'a> {
    pub(super) fn new(x: Option<&'a BinnedMatrix>) -> Self {
        let n = x.map_or(0, |x| x.n_rows);
        HeldOut { x, rows: (0..n as u32).collect(), leaf: vec![0; n], spare: Vec::new() }
    }
}

impl<'a, C: Criterion> Grower<'a, C> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        x: &'a BinnedMatrix,
        criterion: &'a C,
        limits: &'a Limits,
        layout: &'a Layout,
        weights: &[f64],
        rng: ChaCha8Rng,
        stores: Stores,
        held_out: Option<&'a BinnedMatrix>,
    ) -> Self {
        let stride = criterion.stride();
        let rows: Vec<u32> = (0..x.n_rows as u32).filter(|&row| weights[row as usize] > 0.0).collect();
        let samples = rows
            .iter()
            .map(|&row| Sample { weight: weights[row as usize], target: criterion.target(row as usize) })
            .collect();
        Grower {
            x,
            criterion,
            limits,
            rng,
            rows,
            samples,
            hist: stores.hist,
            parent_hist: stores.parent_hist,
            work: stores.work,
            layout,
            feature_order: (0..x.n_cols).collect(),
            constant_sets: layout.constant.clone(),
            scratch: Scratch {
                missing: vec![0.0; stride],
                left: [Vec::with_capacity(stride), Vec::with_capacity(stride)],
                best_left: Vec::with_capacity(stride),
                best_total: vec![0.0; stride],
            },
            scan: criterion.scan(),
            spare: Vec::new(),
            totals: vec![0.0; stride],
            tree: Tree { nodes: vec![Node::leaf(0)], outputs: Vec::new(), importances: vec![0.0; x.n_cols] },
            held_out: HeldOut::new(held_out),
            local: stores.local,
        }
    }

    /// Grows the tree; hands back the histogram stores for the next tree, and the leaf
    /// (output offset) each held-out row reached.
    pub(super) fn grow(mut self) -> (Tree, Stores, Vec<u32>) {
        let mut stack = vec![Task {
            rows: 0..self.rows.len(),
            depth: 0,
            node: 0,
            parent_feature: None,
            constant: 0,
            sibling: None,
            held_out: 0..self.held_out.rows.len(),
        }];
        // Statistics of the nodes on the stack, `stride` values each, in stack order.
        let mut stack_totals = Vec::new();
        node_totals(self.criterion, &self.samples, &mut self.totals);
        stack_totals.extend_from_slice(&self.totals);
        let stride = self.totals.len();
        while let Some(task) = stack.pop() {
            let at = stack_totals.len() - stride;
            self.totals.copy_from_slice(&stack_totals[at..]);
            stack_totals.truncate(at);
            // A small node's subtree is grown on local rows; its tasks are the ones
            // pushed above the current depth, all popped before anything below.
            if self.local.active.is_none() && task.rows.len() <= self.limits.local_rows && task.rows.len() > 1 {
                self.local.enter(&mut self.rows[task.rows.clone()], stack.len());
            }
            self.grow_node(task, &mut stack, &mut stack_totals);
            if self.local.active == Some(stack.len()) {
                self.local.leave();
            }
        }
        debug_assert!(self.local.active.is_none() && self.local.copied_list.is_empty());
        let stores = Stores { hist: self.hist, parent_hist: self.parent_hist, work: self.work, local: self.local };
        (self.tree, stores, self.held_out.leaf)
    }

    /// Grows the node of `task`, whose statistics are in `self.totals`; pushes its
    /// children, if any, on `stack` and their statistics on `stack_totals`.
    pub(super) fn grow_node(&mut self, mut task: Task, stack: &mut Vec<Task>, stack_totals: &mut Vec<f64>) {
        let samples = &self.samples[task.rows.clone()];
        if self.limits.counts {
            // Sums of non-integer weights depend on their order: sum the node's own.
            node_totals(self.criterion, samples, &mut self.totals);
        }
        let impurity = self.criterion.impurity(samples, &self.totals);
        let weighted_impurity = self.totals[0] * impurity;
        if let Some(feature) = task.parent_feature {
            self.tree.importances[feature] -= weighted_impurity;
        }

        let n = samples.len();
        let limits = self.limits;
        let may_split = n >= limits.min_samples_split
            && n >= 2 * limits.min_samples_leaf
            && task.depth < limits.max_depth
            && impurity > PURE;
        let split =
            if may_split { self.find_split(task.rows.clone(), task.sibling.clone(), &mut task.constant) } else { None };
        let Some(split) = split else {
            let output = self.tree.outputs.len() as u32;
            self.criterion.leaf_output(&self.totals, &mut self.tree.outputs);
            self.tree.nodes[task.node] = Node::leaf(output);
            let HeldOut { rows, leaf, .. } = &mut self.held_out;
            for &row in &rows[task.held_out] {
                leaf[row as usize] = output;
            }
            return;
        };

        let n_left = partition(
            &mut self.rows[task.rows.clone()],
            &mut self.samples[task.rows.clone()],
            column_of(self.x, &mut self.local, split.feature),
            &split,
            &mut self.spare,
        );
        // Without missing values in training, missing values at prediction time follow
        // the majority of the node's rows, as in scikit-learn.
        let missing_left = if split.missing_seen { split.missing_left } else { n_left > n - n_left };
        let held_out_middle = match self.held_out.x {
            Some(x) => {
                let HeldOut { rows, spare, .. } = &mut self.held_out;
                let column = x.column(split.feature);
                let rows = &mut rows[task.held_out.clone()];
                task.held_out.start + partition_rows(rows, column, split.threshold, missing_left, spare)
            }
            None => task.held_out.start,
        };
        self.tree.importances[split.feature] += weighted_impurity;
        let left = self.tree.nodes.len();
        self.tree.nodes.extend([Node::leaf(0); 2]);
        self.tree.nodes[task.node] = Node::split(split.feature, split.threshold, missing_left, left as u32);

        let middle = task.rows.start + n_left;
        let mut children = [
            (task.rows.start..middle, left, task.held_out.start..held_out_middle),
            (middle..task.rows.end, left + 1, held_out_middle..task.held_out.end),
        ];
        // Smaller child first on the stack, so the larger one is grown next and can
        // subtract the smaller one's histograms from this node's.
        children.sort_by_key(|(rows, _, _)| rows.len());
        let [(small_rows, small_node, small_held_out), (large_rows, large_node, large_held_out)] = children;
        // The children's statistics, exact since weights are integers (otherwise
        // recomputed by each child): the split's left sums, and the rest.
        let Scratch { best_left, best_total, .. } = &self.scratch;
        let right = best_total.iter().zip(best_left).map(|(t, l)| t - l);
        if small_node == left {
            stack_totals.extend_from_slice(best_left);
            stack_totals.extend(right);
        } else {
            stack_totals.extend(right);
            stack_totals.extend_from_slice(best_left);
        }
        stack.push(Task {
            rows: small_rows.clone(),
            depth: task.depth + 1,
            node: small_node,
            parent_feature: Some(split.feature),
            constant: task.constant,
            sibling: None,
            held_out: small_held_out,
        });
        stack.push(Task {
            rows: large_rows,
            depth: task.depth + 1,
            node: large_node,
            parent_feature: Some(split.feature),
            constant: task.constant,
            sibling: Some(small_rows),
            held_out: large_held_out,
        });
        std::mem::swap(&mut self.hist, &mut self.parent_hist);
    }

    /// Draws candidate features and returns the best split of the node holding
    /// `self.rows[rows]` over them, if any is valid. If it finds features constant in
    /// the node, it points `constant` to a new set that includes them, for the children.
    ///
    /// Candidates are drawn without replacement until `max_features` are visited and at
    /// least one of them is not constant in the node. Features known to be constant
    /// count as visited but cost nothing (scikit-learn's rule).
    pub(super) fn find_split(
        &mut self,
        rows: Range<usize>,
        sibling: Option<Range<usize>>,
        constant: &mut usize,
    ) -> Option<Split> {
        let inherited = *constant;
        let node = (&self.rows[rows.clone()], &self.samples[rows]);
        let sibling = sibling.map(|range| (&self.rows[range.clone()], &self.samples[range]));
        let layout = self.layout;
        let width = layout.width;
        let counts = self.limits.counts;
        self.hist.clear(layout);
        self.scan.start_node(&self.totals);
        let keep = node.0.len() > 2 * N_BIN_CODES;
        let n_features = self.feature_order.len();
        let mut best: Option<Split> = None;
        // Once a split reaches the best possible score, later features can only tie it,
        // and ties keep the earlier feature: they are still drawn, which keeps the
        // random stream and the feature order those of a full search, but not scanned.
        let unbeatable =
            if self.limits.integer_weights { self.criterion.best_possible_score(&self.totals) } else { None };
        let mut drawn = 0;
        let mut varying = 0;
        while drawn < n_features && (drawn < self.limits.max_features || varying == 0) {
            let pick = crate::seed::random_below(&mut self.rng, drawn, n_features);
            self.feature_order.swap(drawn, pick);
            let feature = self.feature_order[drawn];
            drawn += 1;
            if let (Some(best), Some(unbeatable)) = (best, unbeatable)
                && best.score >= unbeatable
            {
                continue;
            }
            let (word, bit) = (feature / 64, 1 << (feature % 64));
            if self.constant_sets[*constant + word] & bit != 0 {
                continue;
            }
            let column = column_of(self.x, &mut self.local, feature);
            let n_node = node.0.len();
            let min_leaf = self.limits.min_samples_leaf;
            let totals = &self.totals;
            let varies = if is_constant(column, node.0) {
                false
            } else if keep {
                // A node large enough for its children to subtract from keeps one
                // histogram per feature.
                let cells = self.hist.take(layout, feature);
                // Two half-histograms when rows far outnumber bins (see `build_hist`).
                let n_bins = layout.n_bins[feature];
                let exact = C::EXACT_SUMS && self.limits.integer_weights;
                let paired = |n_rows: usize| exact && n_rows >= PAIRED_ROWS_PER_BIN * n_bins;
                match sibling {
                    // Subtraction costs a pass over the sibling's rows and one over the
                    // parent's bins; it only pays when that is less than a pass over
                    // this node's rows.
                    Some((rows, samples))
                        if self.parent_hist.built[feature] && rows.len() + layout.n_bins[feature] < n_node =>
                    {
                        let spare = paired(rows.len()).then(|| &mut self.work[..n_bins * width]);
                        with_width!(
                            width,
                            build_hist::<C>(self.criterion, width, counts, cells, column, rows, samples, spare)
                        );
                        subtract_hist::<C>(cells, &self.parent_hist.cells[layout.cells(feature)], width, counts);
                    }
                    _ => {
                        let spare = paired(n_node).then(|| &mut self.work[..n_bins * width]);
                        with_width!(
                            width,
                            build_hist::<C>(self.criterion, width, counts, cells, column, node.0, node.1, spare)
                        )
                    }
                }
                with_width!(
                    width,
                    scan_hist::<C>(
                        &mut self.scan,
                        counts,
                        None,
                        cells,
                        totals,
                        n_node,
                        feature,
                        min_leaf,
                        &mut self.scratch,
                        &mut best
                    )
                );
                true
            } else {
                // Smaller ones share one histogram, which stays in cache, and visit only
                // the bins their rows occupy (a node of 20 rows may spread over 200 bins).
                let cells = &mut self.work[..layout.n_bins[feature] * width];
                let mut occupied = [0u64; N_BIN_CODES / 64];
                with_width!(
                    width,
                    build_sparse_hist::<C>(self.criterion, width, counts, cells, column, node.0, node.1, &mut occupied)
                );
                with_width!(
                    width,
                    scan_hist::<C>(
                        &mut self.scan,
                        counts,
                        Some(&occupied),
                        cells,
                        totals,
                        n_node,
                        feature,
                        min_leaf,
                        &mut self.scratch,
                        &mut best
                    )
                );
                true
            };
            if varies {
                varying += 1;
            } else {
                if *constant == inherited {
                    // Sets are shared by the nodes below the one that made them, so
                    // copy before adding. The arena only grows, by one set per node at
                    // most, and dies with the tree.
                    *constant = self.constant_sets.len();
                    let words = self.x.n_cols.div_ceil(64);
                    self.constant_sets.extend_from_within(inherited..inherited + words);
                }
                self.constant_sets[*constant + word] |= bit;
            }
        }
        best
    }
}

/// The features whose every row has one bin, as a set of `Grower::constant_sets`: the
/// root of every tree starts from it. Such a feature is constant in every node, so a
/// node that draws it would find so and pass it over; marked once per forest, it costs
/// nothing when drawn, where each subtree would otherwise find it again with a pass
/// over its rows (the synthetic scale benchmark's matrices have many: about half of
/// their 113 columns are constant within a question type; ScienceQA's 6 of 141). The
/// draws are unchanged, so the trees are the same.
pub(super) fn constant_columns(x: &BinnedMatrix) -> Vec<u64> {
    let mut set = vec![0; x.n_cols.div_ceil(64)];
    for j in 0..x.n_cols {
        if let Some((&first, rest)) = x.column(j).split_first()
            && rest.iter().all(|&bin| bin == first)
        {
            set[j / 64] |= 1 << (j % 64);
        }
    }
    set
}

/// Whether every row of the node has the same bin in `column`. Much cheaper than a
/// histogram, and deep nodes meet many such features.
pub(super) fn is_constant(column: &[u8], rows: &[u32]) -> bool {
    let first = column[rows[0] as usize];
    // Eight rows per test: a varying feature usually shows it within the first few.
    let mut chunks = rows.chunks_exact(8);
    for chunk in &mut chunks {
        if chunk.iter().fold(0, |differ, &row| differ | (column[row as usize] ^ first)) != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&row| column[row as usize] == first)
}

/// The best split of one feature found so far in each missing-value direction, while a
/// [`Scan`] runs over its bins; see [`FeatureScan::finish`].
pub(super) struct FeatureScan<'s> {
    pub(super) min_leaf: usize,
    /// Rows of the node, and of those with a missing value.
    pub(super) n_node: usize,
    pub(super) n_missing: usize,
    /// Per direction (missing right, missing left): best score, its bin and the next
    /// occupied observed bin (none: every observed bin goes left).
    pub(super) best: [(f64, u8, Option<u8>); 2],
    pub(super) found: [bool; 2],
    /// Per direction, the left child's statistics at the best split, missing excluded.
    pub(super) left: &'s mut [Vec<f64>; 2],
}

impl<'s> FeatureScan<'s> {
    pub(super) fn new(
        min_leaf: usize,
        n_node: usize,
        n_missing: usize,
        best: Option<Split>,
        left: &'s mut [Vec<f64>; 2],
    ) -> Self {
        let to_beat = best.map_or(f64::NEG_INFINITY, |b| b.score);
        FeatureScan { min_leaf, n_node, n_missing, best: [(to_beat, 0, None); 2], found: [false; 2], left }
    }

    /// Scores the split after `bin`, with `n_left` observed rows left of it and `next`
    /// the next occupied observed bin.
    #[inline(always)]
    pub(super) fn consider<S: Scan>(&mut self, scan: &S, sums: &S::Sums, bin: u8, next: Option<u8>, n_left: usize) {
        let min_leaf = self.min_leaf;
        let valid = |n_left: usize| n_left >= min_leaf && self.n_node - n_left >= min_leaf;
        if let Some(missing_right) = scan.missing_right(sums).above(self.best[0].0)
            && valid(n_left)
        {
            self.best[0] = (missing_right, bin, next);
            self.found[0] = true;
            scan.left(sums, &mut self.left[0]);
        }
        // After the last observed bin, missing values left would leave nothing right.
        if self.n_missing == 0 || next.is_none() {
            return;
        }
        if let Some(missing_left) = scan.missing_left(sums).above(self.best[1].0)
            && valid(n_left + self.n_missing)
        {
            self.best[1] = (missing_left, bin, next);
            self.found[1] = true;
            scan.left(sums, &mut self.left[1]);
        }
    }

    /// Updates `best` with this feature's best split if it beats it. Missing values go
    /// left only if that is strictly better than the best split sending them right, so
    /// ties resolve as if every split with missing values right came first. Returns the
    /// direction (index into `left`) of the new best, if any.
    pub(super) fn finish(self, feature: usize, best: &mut Option<Split>) -> Option<usize> {
        let direction = if self.found[1] && self.best[1].0 > self.best[0].0 {
            1
        } else if self.found[0] {
            0
        } else {
            return None;
        };
        let (score, bin, next) = self.best[direction];
        // Bins no training row of the node fell in are split halfway, as scikit-learn
        // puts its threshold halfway between two values. After the last observed bin
        // (missing values alone on the right) every observed bin goes left.
        let threshold = match next {
            Some(next) => bin + (next - bin) / 2,
            None => MISSING_BIN - 1,
        };
        let missing_seen = self.n_missing > 0;
        *best = Some(Split { feature, threshold, missing_left: direction == 1, missing_seen, score });
        Some(direction)
    }
}

impl Scratch {
    /// Records the statistics of a new best split found in direction `direction`, in a
    /// node with statistics `node`, whose missing rows have `self.missing`.
    pub(super) fn keep_best(&mut self, direction: Option<usize>, node: &[f64]) {
        if let Some(direction) = direction {
            self.best_left.clone_from(&self.left[direction]);
            if direction == 1 {
                add_slots(&mut self.best_left, &self.missing);
            }
            self.best_total.clone_from_slice(node);
        }
    }
}

/// Sums the samples' slots into `totals`.
pub(super) fn node_totals<C: Criterion>(criterion: &C, samples: &[Sample<C::Target>], totals: &mut [f64]) {
    // A fixed stride keeps the sums in registers.
    match totals.len() {
        2 => node_totals_of::<C, 2>(criterion, samples, totals),
        3 => node_totals_of::<C, 3>(criterion, samples, totals),
        4 => node_totals_of::<C, 4>(criterion, samples, totals),
        5 => node_totals_of::<C, 5>(criterion, samples, totals),
        6 => node_totals_of::<C, 6>(criterion, samples, totals),
        7 => node_totals_of::<C, 7>(criterion, samples, totals),
        8 => node_totals_of::<C, 8>(criterion, samples, totals),
        _ => {
            totals.fill(0.0);
            for &sample in samples {
                let (slot, value) = criterion.slot_value(sample);
                totals[0] += sample.weight;
                totals[slot] += value;
            }
        }
    }
}

pub(super) fn node_totals_of<C: Criterion, const STRIDE: usize>(
    criterion: &C,
    samples: &[Sample<C::Target>],
    totals: &mut [f64],
) {
    let mut sums = [0.0; STRIDE];
    for &sample in samples {
        let (slot, value) = criterion.slot_value(sample);
        sums[0] += sample.weight;
        // Adding to every slot, zero to all but one, avoids indexing by `slot`, which
        // would force the sums into memory.
        for (s, sum) in sums.iter_mut().enumerate().skip(1) {
            *sum += if s == slot { value } else { 0.0 };
        }
    }
    totals.copy_from_slice(&sums);
}

pub(super) fn add_slots(into: &mut [f64], slots: &[f64]) {
    into.iter_mut().zip(slots).for_each(|(a, b)| *a += b);
}

/// Moves the rows (and their samples) that `split` sends left to the front, keeping
/// the order of each side; returns how many go left. `spare` is scratch space.
pub(super) fn partition<T: Copy>(
    rows: &mut [u32],
    samples: &mut [Sample<T>],
    column: &[u8],
    split: &Split,
    spare: &mut Vec<(u32, Sample<T>)>,
) -> usize {
    // Every row is written to both sides and the side's end moves on for one of them:
    // no branch on the (unpredictable) side.
    spare.clear();
    spare.resize(rows.len(), (0, samples[0]));
    let (mut left, mut right) = (0, 0);
    for i in 0..rows.len() {
        let (row, sample) = (rows[i], samples[i]);
        let goes_left = goes_left(column[row as usize], split.threshold, split.missing_left);
        // `left <= i`: row `i` has been read already.
        rows[left] = row;
        samples[left] = sample;
        spare[right] = (row, sample);
        left += usize::from(goes_left);
        right += usize::from(!goes_left);
    }
    for (i, &(row, sample)) in spare[..right].iter().enumerate() {
        rows[left + i] = row;
        samples[left + i] = sample;
    }
    left
}

/// Moves the rows whose bin in `column` goes left of a split at `threshold` to the
/// front, keeping the order of each side; returns how many go left.
pub(super) fn partition_rows(
    rows: &mut [u32],
    column: &[u8],
    threshold: u8,
    missing_left: bool,
    spare: &mut Vec<u32>,
) -> usize {
    spare.clear();
    spare.resize(rows.len(), 0);
    let (mut left, mut right) = (0, 0);
    for i in 0..rows.len() {
        let row = rows[i];
        let goes_left = goes_left(column[row as usize], threshold, missing_left);
        rows[left] = row;
        spare[right] = row;
        left += usize::from(goes_left);
        right += usize::from(!goes_left);
    }
    rows[left..].copy_from_slice(&spare[..right]);
    left
}
