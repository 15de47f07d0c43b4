//! Rows of `fairshare_usage`: one per user and per group with recorded usage (kind `user` or
//! `group`, name, decayed usage as of `stamp`, and a user's last group). Mapped by hand.

use super::db::{on_inner, Db};
use diesel::prelude::*;

use super::error::StoreError;
use super::schema::fairshare_usage;
use super::{StoredUsage, UsageKind};

fn kind_text(kind: UsageKind) -> &'static str {
    match kind {
        UsageKind::User => "user",
        UsageKind::Group => "group",
    }
}

/// Stores a record, replacing the one of the same kind and name.
pub(super) fn put(connection: &mut Db, usage: &StoredUsage) -> Result<(), StoreError> {
    let row = (
        fairshare_usage::kind.eq(kind_text(usage.kind)),
        fairshare_usage::name.eq(&usage.name),
        fairshare_usage::usage.eq(if usage.usage.is_finite() { usage.usage } else { 0.0 }),
        fairshare_usage::stamp.eq(usage.stamp),
        fairshare_usage::grp.eq(&usage.group),
    );
    let fail = |err| StoreError::database(format!("storing the usage of {}", usage.name), err);
    let key = (kind_text(usage.kind), &usage.name);
    // Every job's end stores its owner's usage: on the inner connection (`db::on_inner!`).
    on_inner!(connection, inner => diesel::delete(fairshare_usage::table.find(key))
        .execute(inner)
        .and_then(|_| diesel::insert_into(fairshare_usage::table).values(row).execute(inner)))
    .map_err(fail)?;
    Ok(())
}

/// Forgets a record (none: nothing to do).
pub(super) fn delete(connection: &mut Db, kind: UsageKind, name: &str) -> Result<(), StoreError> {
    diesel::delete(
        fairshare_usage::table.filter(fairshare_usage::kind.eq(kind_text(kind))).filter(fairshare_usage::name.eq(name)),
    )
    .execute(connection)
    .map_err(|err| StoreError::database(format!("deleting the usage of {name}"), err))?;
    Ok(())
}

/// The raw rows, by kind and name.
pub(super) type UsageRow = (String, String, f64, i64, String);

pub(super) fn load(connection: &mut Db) -> Result<Vec<UsageRow>, diesel::result::Error> {
    fairshare_usage::table
        .order((fairshare_usage::kind.asc(), fairshare_usage::name.asc()))
        .select((
            fairshare_usage::kind,
            fairshare_usage::name,
            fairshare_usage::usage,
            fairshare_usage::stamp,
            fairshare_usage::grp,
        ))
        .load(connection)
}

/// Checks and maps the rows: an unknown kind or a usage not finite and at least 0 is corrupt.
pub(super) fn rows_to_usage(rows: Vec<UsageRow>) -> Result<Vec<StoredUsage>, StoreError> {
    rows.into_iter()
        .map(|(kind, name, usage, stamp, group)| {
            let kind = match kind.as_str() {
                "user" => UsageKind::User,
                "group" => UsageKind::Group,
                _ => return Err(StoreError::CorruptMeta { key: format!("fairshare_usage.{name}"), value: kind }),
            };
            if !usage.is_finite() || usage < 0.0 {
                return Err(StoreError::CorruptMeta {
                    key: format!("fairshare_usage.{name}"),
                    value: usage.to_string(),
                });
            }
            Ok(StoredUsage { kind, name, usage, stamp, group })
        })
        .collect()
}
