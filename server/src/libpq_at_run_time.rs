//! `pbs_server`'s libpq, loaded when a PostgreSQL store is opened, not at every start: this
//! module of the binary alone (`main.rs` declares it; the library and its tests link libpq as
//! usual) defines every libpq function diesel calls, each forwarding to `libpq.so.5` opened
//! with `libloading` on the first call. The linker finds these definitions in the binary's
//! own code before `-lpq`, so with `--as-needed` (rustc's default) `pbs_server` does not
//! record libpq as needed, and a server on SQLite never maps it nor what it pulls in
//! (libssl, libcrypto, gnutls, Kerberos, LDAP, SASL...: 5 MiB resident; issue 19). The
//! system test `the_server_maps_libpq_only_for_a_postgresql_store` checks both sides (`.ci/run`
//! runs it on each store); the PostgreSQL system tests run every statement through here. As
//! libpq is on the linker's command line, the linker exports these definitions, so libpq's own
//! calls to its exported functions pass through them too: one indirect jump more, to the same
//! function.
//!
//! It is the system's libpq either way, found by the same search path the dynamic linker
//! uses (`ld.so` reads `LD_LIBRARY_PATH` in both cases); its features (TLS, Kerberos,
//! `.pgpass`, Debian's socket directory) are unchanged. The Debian package names `libpq5`
//! itself (`server/Cargo.toml`), as `$auto` no longer finds it.
//!
//! Written by hand: no maintained crate makes a `-sys` crate's library lazy, and the 30
//! functions are declared from `pq_sys`'s own signatures, checked at compile time
//! (`signatures_match_pq_sys` below assigns each of pq_sys's items to its entry's type).

use pq_sys::PQnoticeProcessor;
use pq_sys::{ConnStatusType, ExecStatusType, Oid, PGTransactionStatusType, PGconn, PGnotify, PGresult};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

/// The shared object, by its soname (PostgreSQL's client ABI since 8.x).
const SONAME: &str = "libpq.so.5";

/// Opens libpq now (for a PostgreSQL store, before the first connection), so that a missing
/// libpq is a clear error at start rather than a panic at the first statement.
pub fn load() -> Result<(), String> {
    functions().map(drop).map_err(Clone::clone)
}

fn functions() -> Result<&'static Functions, &'static String> {
    static FUNCTIONS: OnceLock<Result<Functions, String>> = OnceLock::new();
    FUNCTIONS.get_or_init(Functions::open).as_ref()
}

/// The entry point for the call in progress: a failure here is the server unable to reach its
/// store, which ends it (the panic hook), as a failed commit does; `load` at start makes it
/// unreachable in practice.
fn loaded() -> &'static Functions {
    match functions() {
        Ok(functions) => functions,
        Err(err) => panic!("{err}"),
    }
}

/// Declares the table of entry points, its loader, and one exported forwarder per entry.
macro_rules! libpq {
    ($($name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        #[allow(non_snake_case)]
        struct Functions {
            $($name: unsafe extern "C" fn($($ty),*) $(-> $ret)?,)*
        }

        impl Functions {
            fn open() -> Result<Functions, String> {
                use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
                // SAFETY: loading libpq runs its ELF initialisers (and its libraries'), as the
                // dynamic linker would at start if libpq were linked.
                let library = unsafe { Library::open(Some(SONAME), RTLD_NOW | RTLD_LOCAL) }
                    .map_err(|err| format!("cannot load {SONAME} (PostgreSQL's client library, package libpq5): {err}"))?;
                // Leaked: libpq stays loaded for the process's life, so the pointers stay valid.
                let library: &'static Library = Box::leak(Box::new(library));
                Ok(Functions {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: the entry's type is pq_sys's declaration of this very symbol
                        // (`signatures_match_pq_sys`).
                        *unsafe { library.get(name.as_bytes()) }
                            .map_err(|err| format!("{SONAME} has no {}: {err}", stringify!($name)))?
                    },)*
                })
            }
        }

        $(
            /// Forwards to libpq's function of the same name.
            ///
            /// # Safety
            /// libpq's own contract for this function (diesel's calls keep it).
            #[no_mangle]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the caller keeps libpq's contract; the pointer is libpq's function.
                unsafe { (loaded().$name)($($arg),*) }
            }
        )*

        /// Fails to compile if an entry's signature is not pq_sys's.
        #[allow(dead_code)]
        fn signatures_match_pq_sys() {
            $(let _: unsafe extern "C" fn($($ty),*) $(-> $ret)? = pq_sys::$name;)*
        }
    };
}

libpq! {
    PQconnectdb(conninfo: *const c_char) -> *mut PGconn;
    PQfinish(conn: *mut PGconn);
    PQstatus(conn: *const PGconn) -> ConnStatusType;
    PQtransactionStatus(conn: *const PGconn) -> PGTransactionStatusType;
    PQerrorMessage(conn: *const PGconn) -> *mut c_char;
    PQsetNoticeProcessor(conn: *mut PGconn, proc_: PQnoticeProcessor, arg: *mut c_void) -> PQnoticeProcessor;
    PQexec(conn: *mut PGconn, query: *const c_char) -> *mut PGresult;
    PQprepare(conn: *mut PGconn, stmt: *const c_char, query: *const c_char, n: c_int, types: *const Oid) -> *mut PGresult;
    PQsendQueryParams(
        conn: *mut PGconn,
        command: *const c_char,
        n: c_int,
        types: *const Oid,
        values: *const *const c_char,
        lengths: *const c_int,
        formats: *const c_int,
        result_format: c_int
    ) -> c_int;
    PQsendQueryPrepared(
        conn: *mut PGconn,
        stmt: *const c_char,
        n: c_int,
        values: *const *const c_char,
        lengths: *const c_int,
        formats: *const c_int,
        result_format: c_int
    ) -> c_int;
    PQsetSingleRowMode(conn: *mut PGconn) -> c_int;
    PQgetResult(conn: *mut PGconn) -> *mut PGresult;
    PQconsumeInput(conn: *mut PGconn) -> c_int;
    PQnotifies(conn: *mut PGconn) -> *mut PGnotify;
    PQputCopyData(conn: *mut PGconn, buffer: *const c_char, nbytes: c_int) -> c_int;
    PQputCopyEnd(conn: *mut PGconn, errormsg: *const c_char) -> c_int;
    PQgetCopyData(conn: *mut PGconn, buffer: *mut *mut c_char, async_: c_int) -> c_int;
    PQresultStatus(res: *const PGresult) -> ExecStatusType;
    PQresultErrorMessage(res: *const PGresult) -> *mut c_char;
    PQresultErrorField(res: *const PGresult, fieldcode: c_int) -> *mut c_char;
    PQntuples(res: *const PGresult) -> c_int;
    PQnfields(res: *const PGresult) -> c_int;
    PQfname(res: *const PGresult, field: c_int) -> *mut c_char;
    PQftype(res: *const PGresult, field: c_int) -> Oid;
    PQgetvalue(res: *const PGresult, row: c_int, field: c_int) -> *mut c_char;
    PQgetlength(res: *const PGresult, row: c_int, field: c_int) -> c_int;
    PQgetisnull(res: *const PGresult, row: c_int, field: c_int) -> c_int;
    PQcmdTuples(res: *mut PGresult) -> *mut c_char;
    PQclear(res: *mut PGresult);
    PQfreemem(ptr: *mut c_void);
}
