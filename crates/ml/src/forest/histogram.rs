//! Per-node histograms of a feature's bins: building them (dense and sparse),
//! subtracting a sibling's from the parent's, and scanning them for the best split.

use super::*;

/// One histogram per feature, laid out by a [`Layout`], for the nodes whose children may
/// subtract from them; tracks which were built so that clearing touches only those.
pub(super) struct HistStore {
    pub(super) cells: Vec<f64>,
    pub(super) built: Vec<bool>,
    pub(super) built_list: Vec<usize>,
}

impl HistStore {
    pub(super) fn new(layout: &Layout) -> HistStore {
        HistStore {
            cells: vec![0.0; layout.offsets[layout.n_bins.len()]],
            built: vec![false; layout.n_bins.len()],
            built_list: Vec::new(),
        }
    }

    /// Zeroes every histogram built since the last clear.
    pub(super) fn clear(&mut self, layout: &Layout) {
        while let Some(feature) = self.built_list.pop() {
            self.built[feature] = false;
            self.cells[layout.cells(feature)].fill(0.0);
        }
    }

    /// The (cleared) histogram of `feature`, marked built.
    pub(super) fn take(&mut self, layout: &Layout, feature: usize) -> &mut [f64] {
        self.built[feature] = true;
        self.built_list.push(feature);
        &mut self.cells[layout.cells(feature)]
    }
}

/// Adds one sample to the cells of its bin.
#[inline(always)]
pub(super) fn add_to_cell<C: Criterion>(criterion: &C, cell: &mut [f64], sample: Sample<C::Target>, count: bool) {
    let (slot, value) = criterion.slot_value(sample);
    if count {
        cell[0] += 1.0;
    }
    if !C::WEIGHT_IS_SUM {
        cell[1] += sample.weight;
    }
    cell[1 + slot] += value;
}

/// Adds `samples`, whose rows are `rows`, to the (cleared) histogram `cells` over the
/// bins of `column`.
///
/// With `spare` (a zeroed histogram of the same layout, left zeroed), alternate rows go
/// to it and it is added in at the end: consecutive rows of one bin then update two
/// cells, not one, and no longer wait on each other's store. Only for sums that are
/// exact whatever their order (integer weights, see [`Criterion::EXACT_SUMS`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_hist<C: Criterion, const W: usize>(
    criterion: &C,
    width: usize,
    counts: bool,
    cells: &mut [f64],
    column: &[u8],
    rows: &[u32],
    samples: &[Sample<C::Target>],
    spare: Option<&mut [f64]>,
) {
    // Counting rows costs a store per row that every row of a bin waits on; only
    // `min_samples_leaf` and non-integer weights need it.
    match (counts, spare) {
        (true, None) => add_rows::<C, W, true>(criterion, width, cells, column, rows, samples),
        (false, None) => add_rows::<C, W, false>(criterion, width, cells, column, rows, samples),
        (true, Some(spare)) => add_rows_paired::<C, W, true>(criterion, width, cells, spare, column, rows, samples),
        (false, Some(spare)) => add_rows_paired::<C, W, false>(criterion, width, cells, spare, column, rows, samples),
    }
}

#[inline(always)]
fn add_rows<C: Criterion, const W: usize, const COUNT: bool>(
    criterion: &C,
    width: usize,
    cells: &mut [f64],
    column: &[u8],
    rows: &[u32],
    samples: &[Sample<C::Target>],
) {
    let width = if W == 0 { width } else { W };
    let missing = cells.len() / width - 1;
    for (&row, &sample) in rows.iter().zip(samples) {
        // Observed codes are below `missing`, MISSING_BIN is not.
        let bin = usize::from(column[row as usize]).min(missing);
        add_to_cell(criterion, &mut cells[bin * width..][..width], sample, COUNT);
    }
}

#[inline(always)]
fn add_rows_paired<C: Criterion, const W: usize, const COUNT: bool>(
    criterion: &C,
    width: usize,
    cells: &mut [f64],
    spare: &mut [f64],
    column: &[u8],
    rows: &[u32],
    samples: &[Sample<C::Target>],
) {
    let width = if W == 0 { width } else { W };
    let missing = cells.len() / width - 1;
    let spare = &mut spare[..cells.len()];
    let mut pairs = rows.chunks_exact(2).zip(samples.chunks_exact(2));
    for (rows, samples) in &mut pairs {
        let a = usize::from(column[rows[0] as usize]).min(missing);
        let b = usize::from(column[rows[1] as usize]).min(missing);
        add_to_cell(criterion, &mut cells[a * width..][..width], samples[0], COUNT);
        add_to_cell(criterion, &mut spare[b * width..][..width], samples[1], COUNT);
    }
    let n_paired = rows.len() & !1;
    add_rows::<C, W, COUNT>(criterion, width, cells, column, &rows[n_paired..], &samples[n_paired..]);
    for (cell, extra) in cells.iter_mut().zip(spare.iter_mut()) {
        *cell += *extra;
        *extra = 0.0;
    }
}

/// [`build_hist`] that also marks, in `occupied`, the bins the rows fall in, so a
/// small node's scan visits those bins only (see [`scan_hist`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_sparse_hist<C: Criterion, const W: usize>(
    criterion: &C,
    width: usize,
    counts: bool,
    cells: &mut [f64],
    column: &[u8],
    rows: &[u32],
    samples: &[Sample<C::Target>],
    occupied: &mut [u64; N_BIN_CODES / 64],
) {
    let width = if W == 0 { width } else { W };
    let missing = cells.len() / width - 1;
    for (&row, &sample) in rows.iter().zip(samples) {
        let bin = usize::from(column[row as usize]).min(missing);
        occupied[bin / 64] |= 1 << (bin % 64);
        add_to_cell(criterion, &mut cells[bin * width..][..width], sample, counts);
    }
}

/// The weight of a histogram cell.
#[inline(always)]
pub(super) fn cell_weight<C: Criterion>(cell: &[f64]) -> f64 {
    if C::WEIGHT_IS_SUM { cell[2..].iter().sum() } else { cell[1] }
}

/// Turns `cells`, the histogram of a node's smaller sibling, into the node's own: the
/// parent's histogram minus the sibling's.
pub(super) fn subtract_hist<C: Criterion>(cells: &mut [f64], parent: &[f64], width: usize, counts: bool) {
    for (cell, parent) in cells.chunks_exact_mut(width).zip(parent.chunks_exact(width)) {
        let empty = if counts { parent[0] == cell[0] } else { cell_weight::<C>(parent) == cell_weight::<C>(cell) };
        if empty {
            // Exactly zero when the node has no row there, not a rounding residue.
            cell.fill(0.0);
        } else {
            cell.iter_mut().zip(parent).for_each(|(c, p)| *c = p - *c);
        }
    }
}

/// Finds the best split of a feature that is not constant in the node from its
/// histogram `cells` and updates `best` (see [`FeatureScan`]); the node has `n_node`
/// rows and statistics `node`. With `occupied` (the bins that hold rows, from
/// [`build_sparse_hist`]), visits only those bins and leaves `cells` zeroed; without,
/// visits every bin and leaves `cells` as they are (kept for the children).
///
/// Without `counts` the histogram has no row counts; bins are then told occupied by
/// their weight and, as `min_samples_leaf` is 1, a side with a bin has enough rows.
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_hist<C: Criterion, const W: usize>(
    scan: &mut C::Scan,
    counts: bool,
    occupied: Option<&[u64; N_BIN_CODES / 64]>,
    cells: &mut [f64],
    node: &[f64],
    n_node: usize,
    feature: usize,
    min_leaf: usize,
    scratch: &mut Scratch,
    best: &mut Option<Split>,
) {
    let width = if W == 0 { node.len() + 1 } else { W };
    let clear = occupied.is_some();
    // A cell's row count, weight and slots 1...
    let parts = |cell: &[f64]| {
        let weight = cell_weight::<C>(cell);
        let rows = if counts { cell[0] as usize } else { usize::from(weight > 0.0) };
        (rows, weight)
    };
    let (cells, missing_cell) = cells.split_at_mut(cells.len() - width);
    let (n_missing, missing_weight) = parts(missing_cell);
    let mut sums = if n_missing > 0 {
        let missing = &mut scratch.missing;
        missing[0] = missing_weight;
        missing[1..].copy_from_slice(&missing_cell[2..width]);
        scan.start(Some(missing))
    } else {
        scan.start(None)
    };
    if clear {
        missing_cell.fill(0.0);
    }
    let n_node = if counts { n_node } else { usize::MAX / 2 };
    let mut feature_scan = FeatureScan::new(min_leaf, n_node, n_missing, *best, &mut scratch.left);
    let mut n_left = 0;
    let mut previous = None;
    let n_observed = cells.len() / width;
    for bin in Bins::new(occupied, n_observed) {
        let cell = &mut cells[bin * width..][..width];
        let (rows, weight) = parts(cell);
        if rows == 0 {
            continue;
        }
        if let Some(previous) = previous {
            feature_scan.consider(scan, &sums, previous, Some(bin as u8), n_left);
        }
        scan.add_stats(&mut sums, weight, &cell[2..width]);
        if clear {
            cell.fill(0.0);
        }
        n_left += rows;
        previous = Some(bin as u8);
    }
    if let (Some(previous), true) = (previous, n_missing > 0) {
        feature_scan.consider(scan, &sums, previous, None, n_left);
    }
    let direction = feature_scan.finish(feature, best);
    scratch.keep_best(direction, node);
}

/// The observed bins a histogram scan visits, in increasing order: all of them, or the
/// set bits of an occupancy set (the missing bin, the last, left out).
pub(super) struct Bins<'a> {
    pub(super) words: Option<&'a [u64; N_BIN_CODES / 64]>,
    /// The word being read (set bits not yet visited) and its index.
    pub(super) word: u64,
    pub(super) at: usize,
    pub(super) next: usize,
    pub(super) n_observed: usize,
}

impl<'a> Bins<'a> {
    pub(super) fn new(words: Option<&'a [u64; N_BIN_CODES / 64]>, n_observed: usize) -> Self {
        Bins { words, word: words.map_or(0, |w| w[0]), at: 0, next: 0, n_observed }
    }
}

impl Iterator for Bins<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let Some(words) = self.words else {
            let bin = self.next;
            self.next += 1;
            return (bin < self.n_observed).then_some(bin);
        };
        loop {
            if self.word != 0 {
                let bin = self.at * 64 + self.word.trailing_zeros() as usize;
                self.word &= self.word - 1;
                return (bin < self.n_observed).then_some(bin);
            }
            self.at += 1;
            self.word = *words.get(self.at)?;
        }
    }
}
