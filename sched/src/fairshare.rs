//! The fair-share tree (OpenPBS `resource_group`, `src/scheduler/fairshare.cpp`): who has
//! how many shares, and from the usage the caller measured, each entity's standing
//! ([`FairShare`]: `fairshare_perc`, `fairshare_tree_usage`, `fairshare_factor`).
//!
//! Owns: the file's grammar and bounds, the tree, the percentages, OpenPBS's usage factor and
//! the decay formula. Must not know: where usage comes from, files, the clock (time is an
//! argument), users' groups.
//!
//! The file, as OpenPBS's: one entity a line, `name id parent shares` (whitespace separated;
//! `#` comments and blank lines skipped). `id` is the resource-group number of the entity's
//! children (OpenPBS's `cresgrp`; shown by `pbsfs`, otherwise unused); `parent` is `root` or
//! an entity of an earlier line; `shares` its shares among its siblings. Leaves are the
//! entities charged for jobs (the server names a user, or a Unix group: see
//! `server/src/state/fairshare.rs`); an inner entity's usage is the sum of its children's (as
//! OpenPBS charges every entity on a job's path). The tree always has `TREEROOT` and, under it,
//! `unknown`: every entity the file does not name sits under `unknown` with 1 share (as
//! OpenPBS). Unlike OpenPBS, whose `unknown_shares` defaults to 0 (no share at all for users
//! outside the file), `unknown` has 1 share unless the file has a line for it
//! (`unknown 1 root 10`), so with no file every user has an equal share.
//!
//! Standing (OpenPBS's `calc_fair_share_perc`, `calc_usage_factor`): an entity's `perc` is its
//! shares over its siblings' times its parent's `perc`; its usage factor `u + (parent's - u) *
//! (its shares over its siblings')` with `u` its usage over the whole tree's (a child of the root:
//! just `u`); `fairshare_factor = 2^(-usage factor / perc)`, 0 when `perc` is 0.

use std::collections::HashMap;

use crate::view::FairShare;

/// The name of the tree's root (OpenPBS `FAIRSHARE_ROOT_NAME`); `root` in the file means it.
pub const ROOT_NAME: &str = "TREEROOT";
/// The group of entities the file does not name.
pub const UNKNOWN_NAME: &str = "unknown";
/// The largest file accepted, bytes.
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// The longest line accepted, bytes (OpenPBS reads 256).
pub const MAX_LINE_BYTES: usize = 256;
/// The most entities a file may name.
pub const MAX_ENTITIES: usize = 10_000;
/// The deepest entity accepted (children of the root are at depth 1).
pub const MAX_DEPTH: usize = 16;
/// The most shares one entity may have.
pub const MAX_SHARES: u32 = 1_000_000;

/// Why a `resource_group` text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShareTreeError {
    #[error("resource group file is larger than {MAX_FILE_BYTES} bytes")]
    TooLarge,
    #[error("resource group file names more than {MAX_ENTITIES} entities")]
    TooManyEntities,
    #[error("resgroup: error on line {line}: {reason}")]
    Line { line: usize, reason: String },
}

/// One entity of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TreeNode {
    name: String,
    /// OpenPBS's `cresgroup`: the resource group of this entity's children.
    id: i64,
    parent: Option<usize>,
    shares: u32,
    children: Vec<usize>,
}

/// The parsed tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareTree {
    /// Index 0 is the root, 1 is `unknown`.
    nodes: Vec<TreeNode>,
    by_name: HashMap<String, usize>,
}

impl Default for ShareTree {
    /// The tree of no file: the root and `unknown` (1 share).
    fn default() -> Self {
        let root = TreeNode { name: ROOT_NAME.to_string(), id: 0, parent: None, shares: 0, children: vec![1] };
        let unknown = TreeNode { name: UNKNOWN_NAME.to_string(), id: 1, parent: Some(0), shares: 1, children: vec![] };
        let by_name = HashMap::from([(ROOT_NAME.to_string(), 0), (UNKNOWN_NAME.to_string(), 1)]);
        ShareTree { nodes: vec![root, unknown], by_name }
    }
}

impl ShareTree {
    /// Parses a `resource_group` text (bounded: see the constants).
    pub fn parse(text: &str) -> Result<ShareTree, ShareTreeError> {
        if text.len() > MAX_FILE_BYTES {
            return Err(ShareTreeError::TooLarge);
        }
        let mut tree = ShareTree::default();
        let mut unknown_set = false;
        for (number, line) in text.lines().enumerate() {
            let line_error = |reason: String| ShareTreeError::Line { line: number + 1, reason };
            if line.len() > MAX_LINE_BYTES {
                return Err(line_error(format!("longer than {MAX_LINE_BYTES} bytes")));
            }
            let content = line.split('#').next().unwrap_or_default().trim();
            if content.is_empty() {
                continue;
            }
            let fields: Vec<&str> = content.split_whitespace().collect();
            let [name, id, parent, shares] = fields[..] else {
                return Err(line_error("expected: name id parent shares".to_string()));
            };
            let id: i64 = id.parse().map_err(|_| line_error(format!("bad id '{id}'")))?;
            let shares = match shares.parse::<u32>() {
                Ok(shares) if shares <= MAX_SHARES => shares,
                _ => return Err(line_error(format!("shares must be an integer from 0 to {MAX_SHARES}"))),
            };
            if name == UNKNOWN_NAME && !unknown_set && (parent == "root" || parent == ROOT_NAME) {
                unknown_set = true;
                tree.nodes[1].shares = shares;
                tree.nodes[1].id = id;
                continue;
            }
            tree.add(name, id, parent, shares).map_err(line_error)?;
        }
        Ok(tree)
    }

    fn add(&mut self, name: &str, id: i64, parent: &str, shares: u32) -> Result<(), String> {
        if self.by_name.contains_key(name) || name == "root" {
            return Err(format!("entity {name} is not unique"));
        }
        if self.nodes.len() >= MAX_ENTITIES + 2 {
            return Err(format!("more than {MAX_ENTITIES} entities"));
        }
        let parent_name = if parent == "root" { ROOT_NAME } else { parent };
        let Some(&parent) = self.by_name.get(parent_name) else {
            return Err(format!("parent {parent} of {name} does not exist"));
        };
        if parent == 1 {
            return Err(format!("{name}: unknown cannot have children in the file"));
        }
        if self.depth(parent) + 1 > MAX_DEPTH {
            return Err(format!("{name} is deeper than {MAX_DEPTH}"));
        }
        let index = self.nodes.len();
        self.nodes.push(TreeNode { name: name.to_string(), id, parent: Some(parent), shares, children: vec![] });
        self.nodes[parent].children.push(index);
        self.by_name.insert(name.to_string(), index);
        Ok(())
    }

    fn depth(&self, mut index: usize) -> usize {
        let mut depth = 0;
        while let Some(parent) = self.nodes[index].parent {
            depth += 1;
            index = parent;
        }
        depth
    }

    /// The file names this entity (or it is the root or `unknown`).
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The file gives this entity children (the root always has `unknown`).
    pub fn has_children(&self, name: &str) -> bool {
        self.by_name.get(name).is_some_and(|&index| !self.nodes[index].children.is_empty())
    }

    /// The number of entities, root and `unknown` included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Only the root and `unknown`.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 2
    }

    /// Every entity's standing. `usage` gives a leaf's usage (≥ 0; anything else counts 0);
    /// `others` are entities the file does not name that take part (owners of jobs, entities
    /// with recorded usage): each joins `unknown` with 1 share, in the order given, once.
    pub fn standings<'n>(&self, usage: &dyn Fn(&str) -> f64, others: impl IntoIterator<Item = &'n str>) -> Standings {
        let mut nodes = self.nodes.clone();
        let mut by_name = self.by_name.clone();
        for name in others {
            if by_name.contains_key(name) || nodes.len() >= MAX_ENTITIES * 100 {
                continue;
            }
            let index = nodes.len();
            // OpenPBS leaves their `cresgroup` unspecified (-1).
            nodes.push(TreeNode { name: name.to_string(), id: -1, parent: Some(1), shares: 1, children: vec![] });
            nodes[1].children.push(index);
            by_name.insert(name.to_string(), index);
        }
        Standings::compute(nodes, by_name, usage)
    }
}

/// One entity's figures, as `pbsfs` shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub name: String,
    /// Distance from the root (the root is 0).
    pub depth: usize,
    /// OpenPBS's `resgroup`: the parent's `id` (-1 for the root).
    pub group: i64,
    /// OpenPBS's `cresgroup`.
    pub id: i64,
    pub shares: u32,
    /// Usage in the caller's units (an inner entity: the sum of its children's).
    pub usage: f64,
    /// The names from the root down to this entity.
    pub path: Vec<String>,
    pub share: FairShare,
}

/// The standings of a whole tree, in depth-first order (children in file order, `unknown` and
/// its members last among the root's).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Standings {
    pub rows: Vec<Standing>,
    by_name: HashMap<String, usize>,
}

impl Standings {
    /// The standing of `name`, if it is in the tree.
    pub fn get(&self, name: &str) -> Option<&Standing> {
        self.by_name.get(name).map(|&index| &self.rows[index])
    }

    fn compute(nodes: Vec<TreeNode>, by_name: HashMap<String, usize>, usage: &dyn Fn(&str) -> f64) -> Standings {
        let count = nodes.len();
        // Children are after their parents in `nodes`, so one backward sweep sums usage.
        let mut usages = vec![0.0f64; count];
        for index in (0..count).rev() {
            let node = &nodes[index];
            if node.children.is_empty() && index > 1 {
                let own = usage(&node.name);
                usages[index] = if own.is_finite() && own > 0.0 { own } else { 0.0 };
            }
            if let Some(parent) = node.parent {
                usages[parent] += usages[index];
            }
        }
        let total = usages[0];
        let mut perc = vec![0.0f64; count];
        let mut factor_of_usage = vec![0.0f64; count];
        perc[0] = 1.0;
        for index in 0..count {
            let sibling_shares: u64 = nodes[index].children.iter().map(|&child| u64::from(nodes[child].shares)).sum();
            for &child in &nodes[index].children {
                let group =
                    if sibling_shares == 0 { 0.0 } else { f64::from(nodes[child].shares) / sibling_shares as f64 };
                perc[child] = group * perc[index];
                let own = if total > 0.0 { usages[child] / total } else { 0.0 };
                factor_of_usage[child] = if index == 0 { own } else { own + (factor_of_usage[index] - own) * group };
            }
        }
        let mut order = Vec::with_capacity(count);
        preorder(&nodes, 0, 0, &mut order);
        let position: HashMap<usize, usize> = order.iter().enumerate().map(|(at, &(index, _))| (index, at)).collect();
        let rows = order
            .iter()
            .map(|&(index, depth)| {
                let node = &nodes[index];
                let mut path = Vec::new();
                let mut at = Some(index);
                while let Some(step) = at {
                    path.push(nodes[step].name.clone());
                    at = nodes[step].parent;
                }
                path.reverse();
                let factor = if perc[index] > 0.0 { (-factor_of_usage[index] / perc[index]).exp2() } else { 0.0 };
                Standing {
                    name: node.name.clone(),
                    depth,
                    group: node.parent.map_or(-1, |parent| nodes[parent].id),
                    id: node.id,
                    shares: node.shares,
                    usage: usages[index],
                    path,
                    share: FairShare { perc: perc[index], usage: factor_of_usage[index], factor },
                }
            })
            .collect();
        let by_name = by_name.into_iter().map(|(name, index)| (name, position[&index])).collect();
        Standings { rows, by_name }
    }
}

/// Depth-first, children in order; `unknown` (index 1) after the root's other children.
fn preorder(nodes: &[TreeNode], index: usize, depth: usize, out: &mut Vec<(usize, usize)>) {
    out.push((index, depth));
    let children = &nodes[index].children;
    let (last, first): (Vec<usize>, Vec<usize>) = children.iter().partition(|&&child| child == 1);
    for child in first.into_iter().chain(last) {
        preorder(nodes, child, depth + 1, out);
    }
}

/// Usage decayed over `elapsed` seconds: `usage * factor^(elapsed / decay_time)` (OpenPBS
/// multiplies by `fairshare_decay_factor` every `fairshare_decay_time`; this is the same curve
/// without steps). No decay for `elapsed <= 0` or a `decay_time` not above 0; a factor outside
/// 0..=1 is clamped.
pub fn decay(usage: f64, elapsed: i64, decay_time: i64, factor: f64) -> f64 {
    if elapsed <= 0 || decay_time <= 0 || !usage.is_finite() {
        return if usage.is_finite() { usage } else { 0.0 };
    }
    let factor = if factor.is_nan() { 1.0 } else { factor.clamp(0.0, 1.0) };
    usage * factor.powf(elapsed as f64 / decay_time as f64)
}

#[cfg(test)]
#[path = "fairshare_tests.rs"]
mod tests;
