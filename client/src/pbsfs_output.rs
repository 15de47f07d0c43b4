//! The text `pbsfs` prints, in OpenPBS's layouts (`src/scheduler/pbsfs.cpp`): the table
//! (`-p`), the tree (`-t`) and one entity with its path (`-g`). Pure and snapshot-tested.
//!
//! Usage is shown in weighted resource-seconds (the server keeps hours; OpenPBS's default
//! unit is `cput` seconds, and its table shows whole units), named after the weights:
//! `ncpus*1+ngpus*1 seconds`.
//! `-g` adds one line OpenPBS does not print, `fairshare_factor`, after `fairshare_tree_usage`.

use proto::ObjectStatus;
use std::fmt::Write;

/// One entity of the reply (`server/src/handlers/fairshare.rs` names the attributes).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entity {
    pub name: String,
    pub depth: usize,
    pub resgroup: i64,
    pub cresgroup: i64,
    pub shares: i64,
    /// Weighted resource-hours.
    pub usage_hours: f64,
    /// Of the whole tree, 0..=1.
    pub percentage: f64,
    pub tree_usage: f64,
    pub factor: f64,
    /// The root's only: what the usage counts (`ncpus=1,ngpus=1`).
    pub weights: Option<String>,
}

impl Entity {
    /// Reads an entity from the server's status record (missing or garbled numbers read 0).
    pub fn from_status(status: &ObjectStatus) -> Entity {
        let number = |name: &str| status.get(name).and_then(|text| text.parse::<f64>().ok()).unwrap_or(0.0);
        let integer = |name: &str| status.get(name).and_then(|text| text.parse::<i64>().ok()).unwrap_or(0);
        Entity {
            name: status.name.clone(),
            depth: status.get("depth").and_then(|text| text.parse().ok()).unwrap_or(0),
            resgroup: integer("resgroup"),
            cresgroup: integer("cresgroup"),
            shares: integer("shares"),
            usage_hours: number("usage"),
            percentage: number("percentage"),
            tree_usage: number("fairshare_tree_usage"),
            factor: number("fairshare_factor"),
            weights: status.get("fairshare_weights").map(str::to_string),
        }
    }

    fn usage_seconds(&self) -> f64 {
        self.usage_hours * 3600.0
    }

    /// OpenPBS's `usage/perc` (-1 when the entity has no share).
    fn usage_per_perc(&self) -> f64 {
        if self.percentage == 0.0 {
            -1.0
        } else {
            self.usage_seconds() / self.percentage
        }
    }
}

fn units(entities: &[Entity]) -> String {
    let weights = entities.iter().find_map(|entity| entity.weights.clone()).unwrap_or_default();
    // `ncpus=1,ngpus=1` -> `ncpus*1+ngpus*1 seconds`.
    format!("{} seconds", weights.replace('=', "*").replace(',', "+"))
}

/// `pbsfs` / `pbsfs -p`: a header and one line per entity.
pub fn table_text(entities: &[Entity]) -> String {
    let mut text = format!("Fairshare usage units are in: {}\n", units(entities));
    for entity in entities {
        let _ = writeln!(
            text,
            "{:<10}: Grp: {:<5}  cgrp: {:<5}Shares: {:<6} Usage: {:<6.0} Perc: {:>6.3}%",
            entity.name,
            entity.resgroup,
            entity.cresgroup,
            entity.shares,
            entity.usage_seconds(),
            entity.percentage * 100.0
        );
    }
    text
}

/// `pbsfs -t`: each entity indented five columns per level, with its `cresgroup`.
pub fn tree_text(entities: &[Entity]) -> String {
    let mut text = String::new();
    for entity in entities {
        // OpenPBS prints `%*s` of " " at the level's width: one space at the root.
        let indent = " ".repeat((entity.depth * 5).max(1));
        let _ = writeln!(text, "{indent}{}({})", entity.name, entity.cresgroup);
    }
    text
}

/// `pbsfs -g ENTITY`: the entity (the last of `path`) and the path from the root to it.
pub fn entity_text(path: &[Entity]) -> String {
    let Some(entity) = path.last() else { return String::new() };
    let mut text = String::new();
    let _ = writeln!(text, "fairshare entity: {}", entity.name);
    let _ = writeln!(text, "Resgroup\t\t: {}", entity.resgroup);
    let _ = writeln!(text, "cresgroup\t\t: {}", entity.cresgroup);
    let _ = writeln!(text, "Shares\t\t\t: {}", entity.shares);
    let _ = writeln!(text, "Percentage\t\t: {:.6}%", entity.percentage * 100.0);
    let _ = writeln!(text, "fairshare_tree_usage\t: {:.6}", entity.tree_usage);
    let _ = writeln!(text, "fairshare_factor\t: {:.6}", entity.factor);
    let _ = writeln!(text, "usage\t\t\t: {:.0} ({})", entity.usage_seconds(), units(path));
    let _ = writeln!(text, "usage/perc\t\t: {:.0}", entity.usage_per_perc());
    text.push_str("Path from root: \n");
    for step in path {
        let _ = writeln!(
            text,
            "{:<10}: {:>5} {:>10.0} / {:>5.3} = {:.0}",
            step.name,
            step.cresgroup,
            step.usage_seconds(),
            step.percentage,
            step.usage_per_perc()
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(name: &str, depth: usize, ids: (i64, i64), shares: i64, hours: f64, perc: f64) -> Entity {
        Entity {
            name: name.into(),
            depth,
            resgroup: ids.0,
            cresgroup: ids.1,
            shares,
            usage_hours: hours,
            percentage: perc,
            tree_usage: hours / 10.0,
            factor: if perc > 0.0 { (-(hours / 10.0) / perc).exp2() } else { 0.0 },
            weights: (depth == 0).then(|| "ncpus=1,ngpus=1".to_string()),
        }
    }

    fn sample() -> Vec<Entity> {
        vec![
            entity("TREEROOT", 0, (-1, 0), -1, 10.0, 1.0),
            entity("physics", 1, (0, 10), 60, 7.5, 60.0 / 101.0),
            entity("alice", 2, (10, 11), 1, 5.0, 60.0 / 101.0 / 4.0),
            entity("bob", 2, (10, 12), 3, 2.5, 60.0 / 101.0 * 0.75),
            entity("chemistry", 1, (0, 20), 40, 0.0, 40.0 / 101.0),
            entity("unknown", 1, (0, 1), 1, 2.5, 1.0 / 101.0),
            entity("dave", 2, (1, -1), 1, 2.5, 1.0 / 101.0),
        ]
    }

    #[test]
    fn table() {
        insta::assert_snapshot!(table_text(&sample()));
    }

    #[test]
    fn tree() {
        insta::assert_snapshot!(tree_text(&sample()));
    }

    #[test]
    fn one_entity_with_its_path() {
        let all = sample();
        let path = vec![all[0].clone(), all[1].clone(), all[2].clone()];
        insta::assert_snapshot!(entity_text(&path));
    }

    #[test]
    fn an_entity_without_share_shows_minus_one() {
        let path = vec![entity("TREEROOT", 0, (-1, 0), -1, 1.0, 1.0), entity("zed", 1, (0, 1), 0, 1.0, 0.0)];
        assert!(entity_text(&path).contains("usage/perc\t\t: -1\n"));
    }

    #[test]
    fn garbled_numbers_read_zero() {
        let status = ObjectStatus {
            name: "x".into(),
            attrs: vec![job::Attr::new("usage", "lots"), job::Attr::new("shares", "3")],
        };
        let read = Entity::from_status(&status);
        assert_eq!((read.usage_hours, read.shares), (0.0, 3));
    }
}
