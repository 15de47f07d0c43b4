//! The `UPDATE`s of a job's row as statements diesel's cache keeps prepared: every column but
//! the key and the spec ([`update_job`]), or only those holds, runs and ends change
//! ([`update_progress`]).
//!
//! Written by hand because diesel prepares every `UpdateStatement` anew (it marks them unsafe
//! to cache: a changeset whose `Option` fields skip columns has SQL that varies), so SQLite
//! parsed the 29-column statement on every start, start report and end of a job (issue 19).
//! [`JobColumns`] and [`ProgressColumns`] set each of their columns on every update
//! (`treat_none_as_null`), so each statement's SQL never varies and a static `QueryId` per
//! column set is honest; the test `store/tests/statements.rs` checks that a job's life parses
//! nothing twice. Generic over the backend: the store runs them on the inner connection
//! (`db::on_inner!`), not through the `MultiConnection`.

use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::query_builder::{AsChangeset, AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType};
use diesel::{Connection, QueryResult, RunQueryDsl};

use super::models::{JobColumns, ProgressColumns};
use super::schema::jobs;

/// `UPDATE job_records SET <every column of Columns> WHERE seq = <key>`; `Columns` names the
/// statement in diesel's cache (one SQL text per column set).
pub(super) struct UpdateRow<Changes, Columns> {
    changes: Changes,
    key: i64,
    columns: PhantomData<Columns>,
}

/// Sets every column of the row keyed `key` (`models::key_column`) but the spec to `columns`.
pub(super) fn update_job(
    key: i64,
    columns: &JobColumns,
) -> UpdateRow<<&JobColumns as AsChangeset>::Changeset, JobColumns> {
    UpdateRow { changes: columns.as_changeset(), key, columns: PhantomData }
}

/// Sets the progress columns of the row keyed `key` to `columns`, and no other.
pub(super) fn update_progress(
    key: i64,
    columns: &ProgressColumns,
) -> UpdateRow<<&ProgressColumns as AsChangeset>::Changeset, ProgressColumns> {
    UpdateRow { changes: columns.as_changeset(), key, columns: PhantomData }
}

impl<Changes, Columns: 'static> QueryId for UpdateRow<Changes, Columns> {
    type QueryId = UpdateRow<(), Columns>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<DB, Changes, Columns> QueryFragment<DB> for UpdateRow<Changes, Columns>
where
    DB: Backend + HasSqlType<BigInt>,
    Changes: QueryFragment<DB>,
    jobs::table: QueryFragment<DB>,
    i64: ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE ");
        // A unit struct: the reference is promoted to 'static.
        QueryFragment::walk_ast(&jobs::table, out.reborrow())?;
        out.push_sql(" SET ");
        self.changes.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        out.push_identifier("seq")?;
        out.push_sql(" = ");
        out.push_bind_param::<BigInt, i64>(&self.key)
    }
}

impl<Conn: Connection, Changes, Columns> RunQueryDsl<Conn> for UpdateRow<Changes, Columns> {}
