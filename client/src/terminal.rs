//! qsub's own terminal during an interactive job: raw mode (keystrokes, Ctrl-C included, go to
//! the job's pty unchanged, as OpenPBS's `settermraw` does), the saved settings restored on
//! every way out (normal end, signal, panic), and the window size.
//!
//! Owns: the one saved copy of the terminal's settings. Must not: read or write the terminal's
//! data (qsub_interactive.rs relays it).

use nix::sys::termios::{self, InputFlags, LocalFlags, OutputFlags, SetArg, SpecialCharacterIndices, Termios};
use proto::interactive::WindowSize;
use std::os::fd::AsRawFd;
use std::sync::Mutex;

/// The settings to restore, while raw mode is on.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// Whether both stdin and stdout are terminals (required for `-I`, as in OpenPBS).
pub fn stdio_is_terminal() -> bool {
    nix::unistd::isatty(std::io::stdin().as_raw_fd()).unwrap_or(false)
        && nix::unistd::isatty(std::io::stdout().as_raw_fd()).unwrap_or(false)
}

/// The terminal's size, or OpenPBS's default (20 x 80) when it cannot tell.
pub fn window_size() -> WindowSize {
    match size_of(std::io::stdin()) {
        Some(size) if size.rows != 0 && size.cols != 0 => size,
        _ => WindowSize::default(),
    }
}

/// The window size of the terminal `fd` is, as the kernel reports it (zeros included); `None`
/// when it is no terminal. The commands' one window-size query.
pub fn size_of(fd: impl std::os::fd::AsFd) -> Option<WindowSize> {
    let size = rustix::termios::tcgetwinsize(fd).ok()?;
    Some(WindowSize { rows: size.ws_row, cols: size.ws_col })
}

/// Raw settings derived from `cooked`: no line editing, echo or signal keys, no input
/// translation or flow control; output post-processing kept without newline translation.
pub fn raw_settings(cooked: &Termios) -> Termios {
    let mut raw = cooked.clone();
    raw.local_flags &=
        !(LocalFlags::ICANON | LocalFlags::ISIG | LocalFlags::ECHO | LocalFlags::ECHOE | LocalFlags::ECHOK);
    raw.input_flags &=
        !(InputFlags::IGNBRK | InputFlags::INLCR | InputFlags::ICRNL | InputFlags::IXON | InputFlags::IXOFF);
    raw.output_flags = OutputFlags::OPOST;
    raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    raw
}

/// Puts stdin's terminal in raw mode, keeping the old settings for [`restore`]; also makes a
/// panic restore them first.
pub fn enter_raw() -> nix::Result<()> {
    let cooked = termios::tcgetattr(std::io::stdin())?;
    termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, &raw_settings(&cooked))?;
    if let Ok(mut saved) = SAVED.lock() {
        *saved = Some(cooked);
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    Ok(())
}

/// Restores the settings saved by [`enter_raw`] (once; later calls do nothing).
pub fn restore() {
    let saved = SAVED.lock().map(|mut saved| saved.take()).unwrap_or_else(|poisoned| poisoned.into_inner().take());
    if let Some(cooked) = saved {
        let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSADRAIN, &cooked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_settings_pass_keys_through() {
        let pty = nix::pty::openpty(None, None).unwrap();
        let cooked = termios::tcgetattr(&pty.slave).unwrap();
        assert!(cooked.local_flags.contains(LocalFlags::ISIG | LocalFlags::ICANON | LocalFlags::ECHO));
        let raw = raw_settings(&cooked);
        for flag in [LocalFlags::ICANON, LocalFlags::ISIG, LocalFlags::ECHO] {
            assert!(!raw.local_flags.contains(flag), "{flag:?}");
        }
        assert!(!raw.input_flags.contains(InputFlags::ICRNL), "Enter stays a carriage return");
        assert!(!raw.input_flags.contains(InputFlags::IXON), "Ctrl-S reaches the job");
        assert_eq!(raw.output_flags, OutputFlags::OPOST, "no second newline translation");
        assert_eq!(raw.control_chars[SpecialCharacterIndices::VMIN as usize], 1);
        termios::tcsetattr(&pty.slave, SetArg::TCSANOW, &raw).unwrap();
        let applied = termios::tcgetattr(&pty.slave).unwrap();
        assert!(!applied.local_flags.contains(LocalFlags::ISIG));
    }
}
