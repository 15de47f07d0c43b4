//! `CapacityTree`: a max segment tree over the members of one node set, answering "the first
//! member (in view order) where one unit fits" in about O(log n) instead of a scan.
//!
//! Owns: the `Capacity` of a node (what a unit can still get there), the `Need` of one unit and
//! the tree over capacities.
//! Must not know: node names, properties, jobs, or how capacities change (the caller updates).

/// What a node can still give one unit, as stored in the tree.
///
/// Invariant: an unusable node (down, offline, held exclusively, or already used by the
/// scatter job being placed) has `cpus_plus_one == 0` and `idle_cpus_plus_one == 0`, so no unit
/// fits there, not even one asking for zero cpus.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Capacity {
    /// Free cpu slots + 1 when usable, else 0.
    pub cpus_plus_one: u32,
    /// Free cpu slots + 1 when usable and no job runs there (for exclusive requests), else 0.
    pub idle_cpus_plus_one: u32,
    /// Free GPUs.
    pub gpus: u32,
    /// Free memory in bytes.
    pub mem: u64,
}

/// What one unit (or, for `place=pack`, the whole job) needs on a single node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct Need {
    /// Cpu slots (u64: a packed job sums its chunks).
    pub cpus: u64,
    /// GPUs.
    pub gpus: u64,
    /// Bytes of memory (0 when not asked).
    pub mem: u64,
    /// The node must have no job (an exclusive request).
    pub idle: bool,
}

impl Capacity {
    /// Whether a unit with `need` fits. On an inner tree node (component-wise maxima) `false`
    /// proves that no member below fits; `true` only says one might.
    pub fn fits(&self, need: &Need) -> bool {
        let cpus_plus_one = if need.idle { self.idle_cpus_plus_one } else { self.cpus_plus_one };
        u64::from(cpus_plus_one) > need.cpus && u64::from(self.gpus) >= need.gpus && self.mem >= need.mem
    }

    fn max(self, other: Capacity) -> Capacity {
        Capacity {
            cpus_plus_one: self.cpus_plus_one.max(other.cpus_plus_one),
            idle_cpus_plus_one: self.idle_cpus_plus_one.max(other.idle_cpus_plus_one),
            gpus: self.gpus.max(other.gpus),
            mem: self.mem.max(other.mem),
        }
    }
}

/// Max segment tree over positions `0..len` (positions are members of a node set, in view
/// order). Leaves past `len` are zero and never fit.
#[derive(Debug, Clone)]
pub(crate) struct CapacityTree {
    /// Number of leaves (a power of two, at least 1).
    leaves: usize,
    /// `cells[1]` is the root; the children of `i` are `2i` and `2i+1`; leaf `p` is
    /// `cells[leaves + p]`.
    cells: Vec<Capacity>,
}

impl CapacityTree {
    /// Builds the tree over the capacities of the members, in member order.
    pub fn new(capacities: impl ExactSizeIterator<Item = Capacity>) -> CapacityTree {
        let leaves = capacities.len().next_power_of_two().max(1);
        let mut cells = vec![Capacity::default(); 2 * leaves];
        for (position, capacity) in capacities.enumerate() {
            cells[leaves + position] = capacity;
        }
        for index in (1..leaves).rev() {
            cells[index] = cells[2 * index].max(cells[2 * index + 1]);
        }
        CapacityTree { leaves, cells }
    }

    /// Component-wise maxima over all members: a quick "can anything fit at all" check.
    pub fn root(&self) -> Capacity {
        self.cells[1]
    }

    /// Replaces the capacity of member `position` and fixes the maxima above it.
    pub fn update(&mut self, position: usize, capacity: Capacity) {
        let mut index = self.leaves + position;
        self.cells[index] = capacity;
        while index > 1 {
            index /= 2;
            self.cells[index] = self.cells[2 * index].max(self.cells[2 * index + 1]);
        }
    }

    /// The lowest position whose capacity fits `need`, if any.
    ///
    /// Subtrees whose maxima do not fit are skipped. The maxima of different dimensions can
    /// come from different members, so in the worst case this visits more than one path, but a
    /// subtree is only entered when something in it is large enough in every dimension.
    pub fn first_fit(&self, need: &Need) -> Option<usize> {
        self.descend(1, need, &|_| true)
    }

    /// The lowest position whose capacity fits `need` and that `accept` also takes (checks the
    /// tree does not keep, such as consumable site resources). Costs up to a scan of the
    /// members that fit `need` when `accept` refuses most of them.
    pub fn first_fit_where(&self, need: &Need, accept: &dyn Fn(usize) -> bool) -> Option<usize> {
        self.descend(1, need, accept)
    }

    fn descend(&self, index: usize, need: &Need, accept: &dyn Fn(usize) -> bool) -> Option<usize> {
        if !self.cells[index].fits(need) {
            return None;
        }
        if index >= self.leaves {
            let position = index - self.leaves;
            return accept(position).then_some(position);
        }
        self.descend(2 * index, need, accept).or_else(|| self.descend(2 * index + 1, need, accept))
    }
}
