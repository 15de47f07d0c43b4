//! TCP keepalive for the one TCP connection (`qsub -I` <-> mother superior,
//! [`crate::interactive`]): both ends set it the same way, so a peer whose host vanished is
//! noticed within about two minutes instead of never.
//!
//! Must not: know the messages, terminals or processes; it only sets socket options.

use std::net::TcpStream;

/// Turns on TCP keepalive (first probe after 60 s idle, then every 10 s, 6 tries).
pub fn keep_alive(stream: &TcpStream) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| -> std::io::Result<()> {
        // SAFETY: setsockopt reads one c_int from a valid pointer to a local of the given size.
        let result = unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if result < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 60)?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 10)?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 6)
}

/// Whether TCP keepalive is on for `stream` (what [`keep_alive`] sets; both ends' tests ask).
pub fn is_kept_alive(stream: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut value: libc::c_int = 0;
    let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `size` bytes into a local c_int.
    let result = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_KEEPALIVE,
            (&mut value as *mut libc::c_int).cast(),
            &mut size,
        )
    };
    result == 0 && value == 1
}

#[cfg(test)]
mod tests {
    #[test]
    fn keepalive_is_on_after_keep_alive() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert!(!super::is_kept_alive(&stream), "off by default");
        super::keep_alive(&stream).unwrap();
        assert!(super::is_kept_alive(&stream));
        use std::os::fd::AsRawFd;
        let mut value: libc::c_int = 0;
        let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `size` bytes into a local c_int.
        let result = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_KEEPIDLE,
                (&mut value as *mut libc::c_int).cast(),
                &mut size,
            )
        };
        assert_eq!((result, value), (0, 60));
    }
}
