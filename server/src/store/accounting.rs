//! The `accounting` table: records committed with the change they record and deleted once the
//! accounting writer has them durably in the files (`accounting_writer.rs`).

use super::db::{on_inner, Db};
use diesel::prelude::*;

use super::error::StoreError;
use super::schema::accounting;
use super::AccountingRecord;

/// Inserts records (their ids must be new).
pub(super) fn add(connection: &mut Db, records: &[AccountingRecord]) -> Result<(), StoreError> {
    for record in records {
        let id = i64::try_from(record.id)
            .map_err(|_| StoreError::Unstorable { seq: 0, message: format!("accounting id {}", record.id) })?;
        let values = (accounting::id.eq(id), accounting::time.eq(record.time), accounting::line.eq(&record.line));
        // Every job's life adds records: on the inner connection (`db::on_inner!`).
        on_inner!(&mut *connection, inner => diesel::insert_into(accounting::table).values(values).execute(inner))
            .map_err(|err| StoreError::database("storing an accounting record", err))?;
    }
    Ok(())
}

/// Deletes the records with ids up to `last`.
pub(super) fn forget(connection: &mut Db, last: u64) -> Result<(), StoreError> {
    let last = i64::try_from(last).unwrap_or(i64::MAX);
    on_inner!(connection, inner => diesel::delete(accounting::table.filter(accounting::id.le(last))).execute(inner))
        .map_err(|err| StoreError::database("forgetting accounting records", err))?;
    Ok(())
}

/// Every stored record, by id.
pub(super) fn load(connection: &mut Db) -> Result<Vec<AccountingRecord>, diesel::result::Error> {
    let rows: Vec<(i64, i64, String)> = accounting::table
        .order(accounting::id.asc())
        .select((accounting::id, accounting::time, accounting::line))
        .load(connection)?;
    Ok(rows
        .into_iter()
        .map(|(id, time, line)| AccountingRecord { id: u64::try_from(id).unwrap_or(0), time, line })
        .collect())
}
