//! The migrations under `server/migrations/`, compiled in, for both stores.
//!
//! One list of steps, one version each, the same on SQLite and PostgreSQL: a step is portable
//! SQL in `up.sql`/`down.sql`, or, only where SQL has no portable spelling (JSON functions),
//! `up.sqlite.sql` and `up.postgresql.sql` (and the matching `down.*`) meaning the same change.
//! Versions are the directory name's date part without dashes, as diesel's own
//! `embed_migrations!` names them, so a store migrated by an earlier release (which used
//! `embed_migrations!`) sees these steps as applied.
//!
//! Written by hand rather than with `embed_migrations!` because that macro has no notion of a
//! dialect; `tests/migrations.rs` checks that [`STEPS`] lists every directory.

use std::fmt;

use diesel::backend::Backend;
use diesel::connection::BoxableConnection;
use diesel::migration::{Migration, MigrationMetadata, MigrationName, MigrationSource, MigrationVersion, Result};

/// Which SQL dialect a step is run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgresql,
}

/// The SQL of one direction of a step.
#[derive(Debug, Clone, Copy)]
pub(super) enum Sql {
    /// Runs unchanged on both stores.
    Portable(&'static str),
    /// One text per dialect.
    Dialect { sqlite: &'static str, postgresql: &'static str },
}

impl Sql {
    fn text(self, dialect: Dialect) -> &'static str {
        match (self, dialect) {
            (Sql::Portable(text), _) => text,
            (Sql::Dialect { sqlite, .. }, Dialect::Sqlite) => sqlite,
            (Sql::Dialect { postgresql, .. }, Dialect::Postgresql) => postgresql,
        }
    }
}

/// One migration: its directory name, and what `up` and `down` run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    pub name: &'static str,
    pub up: Sql,
    pub down: Sql,
}

/// A portable step: `up.sql` and `down.sql` in `server/migrations/$name/`.
macro_rules! portable {
    ($name:literal) => {
        Step {
            name: $name,
            up: Sql::Portable(include_str!(concat!("../../migrations/", $name, "/up.sql"))),
            down: Sql::Portable(include_str!(concat!("../../migrations/", $name, "/down.sql"))),
        }
    };
}

/// A step with one text per dialect: `up.sqlite.sql`, `up.postgresql.sql` and their `down`s.
macro_rules! per_dialect {
    ($name:literal) => {
        Step {
            name: $name,
            up: Sql::Dialect {
                sqlite: include_str!(concat!("../../migrations/", $name, "/up.sqlite.sql")),
                postgresql: include_str!(concat!("../../migrations/", $name, "/up.postgresql.sql")),
            },
            down: Sql::Dialect {
                sqlite: include_str!(concat!("../../migrations/", $name, "/down.sqlite.sql")),
                postgresql: include_str!(concat!("../../migrations/", $name, "/down.postgresql.sql")),
            },
        }
    };
}

/// Every step, oldest first. A new migration directory gets a line here.
pub(super) const STEPS: &[Step] = &[
    portable!("2026-04-20-000000_create_jobs"),
    portable!("2026-11-22-000000_job_keys"),
    portable!("2026-11-22-010000_rerun_requested"),
    portable!("2026-11-22-100000_queues"),
    per_dialect!("2026-11-25-000000_scripts"),
    portable!("2026-11-25-010000_accounting"),
    portable!("2026-11-25-020000_site_resources"),
    portable!("2026-11-26-000000_scheduling"),
    portable!("2026-11-27-000000_lease"),
];

/// The steps as diesel's harness wants them, for one dialect.
#[derive(Debug, Clone, Copy)]
pub struct Migrations(pub Dialect);

impl<DB: Backend> MigrationSource<DB> for Migrations {
    fn migrations(&self) -> Result<Vec<Box<dyn Migration<DB>>>> {
        Ok(STEPS.iter().map(|step| Box::new(Bound::new(*step, self.0)) as Box<dyn Migration<DB>>).collect())
    }
}

/// A step bound to its dialect, with the version diesel records.
struct Bound {
    step: Step,
    dialect: Dialect,
    name: Name,
}

impl Bound {
    fn new(step: Step, dialect: Dialect) -> Bound {
        Bound { step, dialect, name: Name(step.name) }
    }
}

/// A step's name; its version is the part before the first `_`, without dashes.
struct Name(&'static str);

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl MigrationName for Name {
    fn version(&self) -> MigrationVersion<'_> {
        let date = self.0.split('_').next().unwrap_or(self.0);
        MigrationVersion::from(date.replace('-', ""))
    }
}

/// Every step runs in its own transaction (the default).
struct InTransaction;

impl MigrationMetadata for InTransaction {}

impl<DB: Backend> Migration<DB> for Bound {
    fn run(&self, conn: &mut dyn BoxableConnection<DB>) -> Result<()> {
        conn.batch_execute(self.step.up.text(self.dialect))?;
        Ok(())
    }

    fn revert(&self, conn: &mut dyn BoxableConnection<DB>) -> Result<()> {
        conn.batch_execute(self.step.down.text(self.dialect))?;
        Ok(())
    }

    fn metadata(&self) -> &dyn MigrationMetadata {
        &InTransaction
    }

    fn name(&self) -> &dyn MigrationName {
        &self.name
    }
}
