//! Node sets: the nodes a unit may use given its `host` and `properties`, each with its own
//! `CapacityTree`, created on first use in a pass and shared by every request naming the
//! same host and properties.
//!
//! Owns: property and host matching, the name/property index, set membership.
//! Must not know: jobs, priorities, how units are counted or merged.

use std::collections::HashMap;

use super::{Work, WorkNode};
use crate::captree::{Capacity, CapacityTree, Need};

/// Which nodes a unit may use: the node's name must equal every host, and every property must
/// be the node's name or one of its properties (`!word`: must not be one of them). Both lists are sorted and deduplicated, so
/// equal requirements give equal keys.
///
/// `cpus` / `gpus`: the unit needs at least one cpu / GPU, so nodes with none free when the
/// set is built are left out (free resources only shrink during a pass). This keeps full
/// nodes, and for GPU units all cpu-only nodes, out of the tree, where their large values in
/// other dimensions would send the search down subtrees that cannot hold the unit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct SetKey<'a> {
    pub hosts: Vec<&'a str>,
    pub properties: Vec<&'a str>,
    pub cpus: bool,
    pub gpus: bool,
}

impl<'a> SetKey<'a> {
    /// A key from unsorted requirements (a packed job passes the union over its chunks).
    pub fn new(hosts: impl IntoIterator<Item = &'a str>, properties: impl IntoIterator<Item = &'a str>) -> SetKey<'a> {
        let mut hosts: Vec<&str> = hosts.into_iter().collect();
        let mut properties: Vec<&str> = properties.into_iter().collect();
        hosts.sort_unstable();
        hosts.dedup();
        properties.sort_unstable();
        properties.dedup();
        SetKey { hosts, properties, cpus: false, gpus: false }
    }

    /// The key narrowed to nodes that have free cpus / GPUs if `need` asks for them.
    pub fn for_need(self, need: &Need) -> SetKey<'a> {
        SetKey { cpus: need.cpus > 0, gpus: need.gpus > 0, ..self }
    }

    /// Whether `node` could ever hold a unit of this set in the current pass.
    fn admits(&self, node: &WorkNode) -> bool {
        node.usable
            && (!self.cpus || node.slots.free() > 0)
            && (!self.gpus || node.gpus.free() > 0)
            && self.matches(node)
    }

    /// Whether `node` satisfies the host and property requirements (usability aside).
    pub fn matches(&self, node: &WorkNode) -> bool {
        self.hosts.iter().all(|host| node.name == *host)
            && self.properties.iter().all(|property| has_property(node.name, node.properties, property))
    }
}

/// Whether a node named `name` with `properties` meets one requirement: a property it has (or
/// its name); for `!word` (a site boolean asked `False`), a property it lacks; for
/// `res>=N` (a site number), a property `res:M` with M at least N.
pub(crate) fn has_property(name: &str, properties: &[String], requirement: &str) -> bool {
    if let Some(word) = requirement.strip_prefix('!') {
        return !properties.iter().any(|own| own == word);
    }
    if let Some((resource, wanted)) = requirement.split_once(">=") {
        let Ok(wanted) = wanted.parse::<u64>() else { return false };
        return properties.iter().any(|own| {
            own.split_once(':').is_some_and(|(have, amount)| {
                have == resource && amount.parse::<u64>().is_ok_and(|amount| amount >= wanted)
            })
        });
    }
    name == requirement || properties.iter().any(|own| own == requirement)
}

/// Whether nodes meeting `requirement` are listed under it in the property index (a plain
/// word): `!word` and `res>=N` are met by nodes listed under other words.
fn is_indexed(requirement: &str) -> bool {
    !requirement.starts_with('!') && !requirement.contains(">=")
}

/// One set: its members (node indices, ascending) and the tree over their capacities.
#[derive(Debug)]
struct NodeSet {
    members: Vec<u32>,
    tree: CapacityTree,
}

/// Node indices by name and by property (a node name counts as a property of its node).
#[derive(Debug, Default)]
struct NameIndex<'a> {
    by_name: HashMap<&'a str, Vec<u32>>,
    by_property: HashMap<&'a str, Vec<u32>>,
}

/// All sets created in this pass. Invariant: every member's `memberships` names the set.
#[derive(Debug, Default)]
pub(crate) struct NodeSets<'a> {
    sets: Vec<NodeSet>,
    /// The key of each set, by id.
    keys: Vec<SetKey<'a>>,
    /// Build no name index: sets are made by scanning every node (a working copy used for one
    /// placement only, where building the index would cost more than the scans).
    pub unindexed: bool,
    /// Per set, once asked: every node matching its key (see `Work::matching`).
    matching: Vec<Option<Vec<u32>>>,
    ids: HashMap<SetKey<'a>, u32>,
    index: Option<NameIndex<'a>>,
}

impl NodeSets<'_> {
    /// Sets the capacity of the member at `position` of `set`.
    pub fn update(&mut self, set: u32, position: usize, capacity: Capacity) {
        self.sets[set as usize].tree.update(position, capacity);
    }

    /// The nodes matching `set` as `Work::matching` last computed them (none before).
    pub fn matching_known(&self, set: u32) -> &[u32] {
        self.matching[set as usize].as_deref().unwrap_or_default()
    }
}

impl<'a> Work<'a> {
    /// The id of the set for `key`, building it (members admitted now, in view order) if new.
    pub fn set_for(&mut self, key: SetKey<'a>) -> u32 {
        if let Some(&id) = self.sets.ids.get(&key) {
            return id;
        }
        let id = self.sets.sets.len() as u32;
        let members: Vec<u32> =
            self.candidates(&key).into_iter().filter(|&node| key.admits(&self.nodes[node as usize])).collect();
        for (position, &node) in members.iter().enumerate() {
            self.nodes[node as usize].memberships.push((id, position as u32));
        }
        let tree = CapacityTree::new(members.iter().map(|&node| self.capacity(node as usize)));
        self.sets.sets.push(NodeSet { members, tree });
        self.sets.keys.push(key.clone());
        self.sets.matching.push(None);
        self.sets.ids.insert(key, id);
        id
    }

    /// The first member of `set` (in view order) where `need` and `amounts` (consumable site
    /// resources, per unit) fit now.
    pub fn first_fit(&self, set: u32, need: &Need, amounts: &[(String, u64)]) -> Option<usize> {
        let set = &self.sets.sets[set as usize];
        let position = if amounts.is_empty() {
            set.tree.first_fit(need)
        } else {
            let accept = |position: usize| self.nodes[set.members[position] as usize].holds(amounts);
            set.tree.first_fit_where(need, &accept)
        };
        position.map(|position| set.members[position] as usize)
    }

    /// Maxima over the set's members now (a quick "could anything fit" check).
    pub fn set_capacity(&self, set: u32) -> Capacity {
        self.sets.sets[set as usize].tree.root()
    }

    /// Every node matching the hosts and properties of `set`'s key, whatever it holds now and
    /// whether it is up (for telling why a request does not fit), kept for
    /// `NodeSets::matching_known`. Computed once per set.
    pub fn matching(&mut self, set: u32) {
        if self.sets.matching[set as usize].is_none() {
            let key = self.sets.keys[set as usize].clone();
            let mut nodes = self.candidates(&key);
            nodes.retain(|&node| key.matches(&self.nodes[node as usize]));
            self.sets.matching[set as usize] = Some(nodes);
        }
    }

    /// A superset of the nodes matching `key`, ascending: the nodes named by the first host or
    /// having the rarest property, or all nodes when the key is empty.
    fn candidates(&mut self, key: &SetKey<'a>) -> Vec<u32> {
        if key.hosts.is_empty() && key.properties.is_empty() || self.sets.unindexed {
            return (0..self.nodes.len() as u32).collect();
        }
        let nodes = &self.nodes;
        let index = self.sets.index.get_or_insert_with(|| NameIndex::new(nodes));
        let list = match key.hosts.first() {
            Some(host) => index.by_name.get(host),
            None => {
                // `!word` and `res>=N` are not index words: only plain words narrow the nodes.
                let positive = key.properties.iter().filter(|property| is_indexed(property));
                match positive
                    .map(|property| index.by_property.get(property))
                    .min_by_key(|list| list.map_or(0, Vec::len))
                {
                    Some(list) => list,
                    None => return (0..self.nodes.len() as u32).collect(),
                }
            }
        };
        list.cloned().unwrap_or_default()
    }
}

impl<'a> NameIndex<'a> {
    fn new(nodes: &[WorkNode<'a>]) -> NameIndex<'a> {
        let mut index = NameIndex::default();
        for (node, work_node) in nodes.iter().enumerate() {
            let node = node as u32;
            index.by_name.entry(work_node.name).or_default().push(node);
            index.by_property.entry(work_node.name).or_default().push(node);
            for property in work_node.properties {
                let list = index.by_property.entry(property.as_str()).or_default();
                // A node listing its own name, or a property twice, is indexed once.
                if list.last() != Some(&node) {
                    list.push(node);
                }
            }
        }
        index
    }
}
