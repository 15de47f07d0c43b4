//! The MUNGE binding: `libmunge.so.2` loaded at run time (`libloading`), so building needs nothing
//! and a machine without MUNGE gets one clear error when the cluster transport is used.
//!
//! Owns: the five library calls (`munge_ctx_create`/`_set`/`_destroy`, `munge_encode`,
//! `munge_decode`, `munge_strerror`) and freeing what they return. Must not know what a
//! credential's payload means (`seal.rs` does).
//!
//! A credential may be restricted to the uid that will decode it ([`encode_for`]): munged then
//! decodes it for that uid only, and its payload (encrypted) can carry a secret.
//!
//! Every call talks to munged over its Unix socket and blocks (briefly); async code calls
//! these from `spawn_blocking`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// munged's socket on a Debian host.
pub const DEFAULT_SOCKET: &str = "/run/munge/munge.socket.2";

/// `MUNGE_OPT_SOCKET` (munge.h).
const OPT_SOCKET: c_int = 8;
/// `MUNGE_OPT_CIPHER_TYPE` and `MUNGE_CIPHER_AES128` (munge.h): a credential whose payload is a
/// secret is encrypted whatever munged's default.
const OPT_CIPHER_TYPE: c_int = 0;
const CIPHER_AES128: c_int = 4;
/// `MUNGE_OPT_UID_RESTRICTION` (munge.h): only this uid may decode the credential.
const OPT_UID_RESTRICTION: c_int = 9;

/// Error numbers of munge.h that get their own variant.
const EMUNGE_SOCKET: c_int = 6;
const EMUNGE_BAD_CRED: c_int = 8;
const EMUNGE_CRED_INVALID: c_int = 14;
const EMUNGE_CRED_EXPIRED: c_int = 15;
const EMUNGE_CRED_REWOUND: c_int = 16;
const EMUNGE_CRED_REPLAYED: c_int = 17;
const EMUNGE_CRED_UNAUTHORIZED: c_int = 18;

/// Why a credential could not be made or accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MungeError {
    #[error("cannot load libmunge.so.2 ({0}): install MUNGE (Debian: apt-get install munge)")]
    Library(String),
    #[error("cannot reach munged at {}: {}", socket.display(), with_hint(detail))]
    Unreachable { socket: PathBuf, detail: String },
    #[error("MUNGE credential replayed")]
    Replayed,
    #[error("MUNGE credential expired (or the clocks of the two hosts differ)")]
    Expired,
    #[error("MUNGE credential invalid (forged, garbled, or made with another MUNGE key): {0}")]
    Invalid(String),
    /// Restricted to another uid than the decoder's (`MUNGE_OPT_UID_RESTRICTION`).
    #[error("MUNGE credential meant for another uid: {0}")]
    Unauthorized(String),
    #[error("MUNGE error: {0}")]
    Other(String),
}

/// libmunge's own text often asks "Did you start munged?" already; else we do.
fn with_hint(detail: &str) -> String {
    if detail.contains("munged") {
        detail.to_string()
    } else {
        format!("{detail} (is munged running?)")
    }
}

/// A decoded credential: who made it, and the payload it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub uid: u32,
    pub gid: u32,
    pub payload: Vec<u8>,
}

type CtxCreate = unsafe extern "C" fn() -> *mut c_void;
type CtxDestroy = unsafe extern "C" fn(*mut c_void);
type CtxSet = unsafe extern "C" fn(*mut c_void, c_int, ...) -> c_int;
type CtxStrerror = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type Encode = unsafe extern "C" fn(*mut *mut c_char, *mut c_void, *const c_void, c_int) -> c_int;
type Decode =
    unsafe extern "C" fn(*const c_char, *mut c_void, *mut *mut c_void, *mut c_int, *mut u32, *mut u32) -> c_int;
type Strerror = unsafe extern "C" fn(c_int) -> *const c_char;

/// The library's entry points, resolved once per process.
struct Library {
    ctx_create: CtxCreate,
    ctx_destroy: CtxDestroy,
    ctx_set: CtxSet,
    ctx_strerror: CtxStrerror,
    encode: Encode,
    decode: Decode,
    strerror: Strerror,
}

fn library() -> Result<&'static Library, MungeError> {
    static LIBRARY: OnceLock<Result<Library, MungeError>> = OnceLock::new();
    LIBRARY.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Library, MungeError> {
    use libloading::os::unix::{Library as Handle, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading libmunge runs only its (trivial) ELF initialisers.
    let handle = unsafe { Handle::open(Some("libmunge.so.2"), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|error| MungeError::Library(error.to_string()))?;
    // The handle is leaked: the process keeps libmunge loaded, so every resolved pointer
    // below stays valid for its whole life.
    let handle: &'static Handle = Box::leak(Box::new(handle));
    fn symbol<T: Copy>(handle: &'static Handle, name: &str) -> Result<T, MungeError> {
        // SAFETY: each call site names `T` as the signature munge.h declares for `name`.
        unsafe { handle.get::<T>(name.as_bytes()) }
            .map(|symbol| *symbol)
            .map_err(|_| MungeError::Library(format!("no symbol {name}")))
    }
    Ok(Library {
        ctx_create: symbol(handle, "munge_ctx_create")?,
        ctx_destroy: symbol(handle, "munge_ctx_destroy")?,
        ctx_set: symbol(handle, "munge_ctx_set")?,
        ctx_strerror: symbol(handle, "munge_ctx_strerror")?,
        encode: symbol(handle, "munge_encode")?,
        decode: symbol(handle, "munge_decode")?,
        strerror: symbol(handle, "munge_strerror")?,
    })
}

/// One context bound to a munged socket; destroyed on drop.
struct Context {
    library: &'static Library,
    raw: *mut c_void,
    socket: PathBuf,
}

impl Context {
    fn new(socket: &Path) -> Result<Context, MungeError> {
        let library = library()?;
        // SAFETY: munge_ctx_create takes nothing and returns NULL or a context we own.
        let raw = unsafe { (library.ctx_create)() };
        if raw.is_null() {
            return Err(MungeError::Other("munge_ctx_create failed (out of memory)".to_string()));
        }
        let context = Context { library, raw, socket: socket.to_path_buf() };
        let path = CString::new(socket.as_os_str().as_encoded_bytes())
            .map_err(|_| MungeError::Other(format!("socket path {} contains NUL", socket.display())))?;
        // SAFETY: MUNGE_OPT_SOCKET takes one `char *`; munge copies the string.
        let status = unsafe { (library.ctx_set)(raw, OPT_SOCKET, path.as_ptr()) };
        if status != 0 {
            return Err(context.error(status));
        }
        Ok(context)
    }

    /// The typed error for `status`, with the context's detailed message.
    fn error(&self, status: c_int) -> MungeError {
        // SAFETY: both return NULL or a NUL-terminated static/context-owned string.
        let detail = unsafe {
            let text = (self.library.ctx_strerror)(self.raw);
            let text = if text.is_null() { (self.library.strerror)(status) } else { text };
            if text.is_null() {
                format!("error {status}")
            } else {
                CStr::from_ptr(text).to_string_lossy().into_owned()
            }
        };
        match status {
            EMUNGE_SOCKET => MungeError::Unreachable { socket: self.socket.clone(), detail },
            EMUNGE_CRED_REPLAYED => MungeError::Replayed,
            EMUNGE_CRED_EXPIRED | EMUNGE_CRED_REWOUND => MungeError::Expired,
            EMUNGE_CRED_UNAUTHORIZED => MungeError::Unauthorized(detail),
            EMUNGE_BAD_CRED..=EMUNGE_CRED_INVALID => MungeError::Invalid(detail),
            _ => MungeError::Other(detail),
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: `raw` came from munge_ctx_create and is destroyed once.
        unsafe { (self.library.ctx_destroy)(self.raw) }
    }
}

/// Calls made to each munged (by its socket) in this test process: what an exchange costs.
#[cfg(test)]
static CALLS: std::sync::Mutex<Vec<(PathBuf, u64)>> = std::sync::Mutex::new(Vec::new());

#[cfg(test)]
fn count(socket: &Path) {
    let mut calls = CALLS.lock().unwrap();
    match calls.iter_mut().find(|(known, _)| known == socket) {
        Some((_, count)) => *count += 1,
        None => calls.push((socket.to_path_buf(), 1)),
    }
}

#[cfg(not(test))]
fn count(_: &Path) {}

/// How many credentials were encoded or decoded through munged at `socket` in this test process.
#[cfg(test)]
pub(crate) fn calls(socket: &Path) -> u64 {
    CALLS.lock().unwrap().iter().find(|(known, _)| known == socket).map_or(0, |(_, count)| *count)
}

/// Makes a credential carrying `payload`, as the calling process's uid/gid (blocking).
pub fn encode(socket: &Path, payload: &[u8]) -> Result<String, MungeError> {
    encode_with(socket, payload, None)
}

/// Makes a credential carrying `payload` that only `uid` may decode, its payload encrypted
/// (AES-128 whatever munged's default): how a secret travels in one (blocking).
pub fn encode_for(socket: &Path, payload: &[u8], uid: u32) -> Result<String, MungeError> {
    encode_with(socket, payload, Some(uid))
}

fn encode_with(socket: &Path, payload: &[u8], restriction: Option<u32>) -> Result<String, MungeError> {
    let context = Context::new(socket)?;
    if let Some(uid) = restriction {
        // SAFETY: MUNGE_OPT_UID_RESTRICTION takes one `uid_t`, MUNGE_OPT_CIPHER_TYPE one `int`.
        let status = unsafe { (context.library.ctx_set)(context.raw, OPT_UID_RESTRICTION, uid as libc::uid_t) };
        if status != 0 {
            return Err(context.error(status));
        }
        let status = unsafe { (context.library.ctx_set)(context.raw, OPT_CIPHER_TYPE, CIPHER_AES128) };
        if status != 0 {
            return Err(context.error(status));
        }
    }
    count(socket);
    let len = c_int::try_from(payload.len()).map_err(|_| MungeError::Other("payload too large".to_string()))?;
    let mut cred: *mut c_char = std::ptr::null_mut();
    // SAFETY: `payload` is valid for `len` bytes; on success `cred` is a malloc'd
    // NUL-terminated string that we free below.
    let status = unsafe { (context.library.encode)(&mut cred, context.raw, payload.as_ptr().cast(), len) };
    if status != 0 {
        return Err(context.error(status));
    }
    // SAFETY: success: `cred` is non-null and NUL-terminated; freed exactly once.
    let text = unsafe {
        let text = CStr::from_ptr(cred).to_string_lossy().into_owned();
        libc::free(cred.cast());
        text
    };
    Ok(text)
}

/// Checks a credential with munged (which refuses a replay) and returns its maker and payload
/// (blocking).
pub fn decode(socket: &Path, credential: &str) -> Result<Decoded, MungeError> {
    let context = Context::new(socket)?;
    count(socket);
    let cred = CString::new(credential).map_err(|_| MungeError::Invalid("credential contains NUL".to_string()))?;
    let (mut buf, mut len, mut uid, mut gid) = (std::ptr::null_mut::<c_void>(), 0 as c_int, 0u32, 0u32);
    // SAFETY: all out-pointers are valid; `buf` is malloc'd by libmunge (also on some
    // errors) and freed below.
    let status =
        unsafe { (context.library.decode)(cred.as_ptr(), context.raw, &mut buf, &mut len, &mut uid, &mut gid) };
    let payload = if buf.is_null() {
        Vec::new()
    } else {
        // SAFETY: libmunge allocated `len` bytes at `buf`; freed exactly once.
        unsafe {
            let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), usize::try_from(len).unwrap_or(0)).to_vec();
            libc::free(buf);
            bytes
        }
    };
    if status != 0 {
        return Err(context.error(status));
    }
    Ok(Decoded { uid, gid, payload })
}

/// How a test of this crate that needs MUNGE skips (the rule of the system tests'
/// `tests::skip`): `SKIPPED: <reason>` on stderr and the caller returns, except under CI
/// (`CI` set and not empty), where a test that cannot run is a failure: a panic.
#[cfg(test)]
pub(crate) fn skip_test(reason: &str) {
    if std::env::var_os("CI").is_some_and(|value| !value.is_empty()) {
        panic!("SKIPPED under CI, which is a failure (CI is set): {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_munged_is_one_clear_line() {
        let socket = Path::new("/nonexistent/munge.socket");
        match encode(socket, b"x") {
            Err(MungeError::Library(_)) => skip_test("libmunge.so.2 is not installed"),
            Err(error @ MungeError::Unreachable { .. }) => {
                let text = error.to_string();
                assert!(text.starts_with("cannot reach munged at /nonexistent/munge.socket: "), "{text}");
                assert!(text.contains("munged?"), "{text}");
                assert!(!text.contains('\n'));
            }
            other => panic!("{other:?}"),
        }
    }
}
