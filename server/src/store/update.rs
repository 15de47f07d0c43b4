//! The `UPDATE` of a job's row as a statement diesel's cache keeps prepared ([`UpdateJob`]).
//!
//! Written by hand because diesel prepares every `UpdateStatement` anew (it marks them unsafe
//! to cache: a changeset whose `Option` fields skip columns has SQL that varies), so SQLite
//! parsed the 29-column statement on every start, start report and end of a job (issue 19).
//! [`JobColumns`] sets every column on every update (`treat_none_as_null`), so this statement's
//! SQL never varies and a static `QueryId` is honest; the test `store/tests/statements.rs`
//! checks that a job's life parses nothing twice.

use diesel::query_builder::{AsChangeset, AstPass, QueryFragment, QueryId};
use diesel::sql_types::BigInt;
use diesel::{Connection, QueryResult, RunQueryDsl};

use super::db::Db;
use super::models::JobColumns;
use super::schema::jobs;

type Backend = <Db as Connection>::Backend;

/// `UPDATE job_records SET <every column of JobColumns> WHERE seq = <key>`.
pub(super) struct UpdateJob<'a> {
    changes: <&'a JobColumns as AsChangeset>::Changeset,
    key: i64,
}

impl<'a> UpdateJob<'a> {
    /// Sets every column of the row keyed `key` (`models::key_column`) to `columns`.
    pub(super) fn new(key: i64, columns: &'a JobColumns) -> Self {
        UpdateJob { changes: columns.as_changeset(), key }
    }
}

impl QueryId for UpdateJob<'_> {
    type QueryId = UpdateJob<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Backend> for UpdateJob<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Backend>) -> QueryResult<()> {
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

impl RunQueryDsl<Db> for UpdateJob<'_> {}
