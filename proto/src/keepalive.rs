//! TCP keepalive for the one TCP connection (`qsub -I` <-> mother superior,
//! [`crate::interactive`]): both ends set it the same way, so a peer whose host vanished is
//! noticed within about two minutes instead of never.
//!
//! Must not: know the messages, terminals or processes; it only sets socket options (through
//! `socket2`, which owns the `setsockopt` calls).

use std::net::TcpStream;
use std::time::Duration;

use socket2::{SockRef, TcpKeepalive};

/// Turns on TCP keepalive (first probe after 60 s idle, then every 10 s, 6 tries).
pub fn keep_alive(stream: &TcpStream) -> std::io::Result<()> {
    let keepalive =
        TcpKeepalive::new().with_time(Duration::from_secs(60)).with_interval(Duration::from_secs(10)).with_retries(6);
    SockRef::from(stream).set_tcp_keepalive(&keepalive)
}

/// Whether TCP keepalive is on for `stream` (what [`keep_alive`] sets; both ends' tests ask).
pub fn is_kept_alive(stream: &TcpStream) -> bool {
    SockRef::from(stream).keepalive().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn keepalive_is_on_after_keep_alive() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert!(!super::is_kept_alive(&stream), "off by default");
        super::keep_alive(&stream).unwrap();
        assert!(super::is_kept_alive(&stream));
        let socket = socket2::SockRef::from(&stream);
        assert_eq!(socket.tcp_keepalive_time().unwrap(), Duration::from_secs(60));
        assert_eq!(socket.tcp_keepalive_interval().unwrap(), Duration::from_secs(10));
        assert_eq!(socket.tcp_keepalive_retries().unwrap(), 6);
    }
}
