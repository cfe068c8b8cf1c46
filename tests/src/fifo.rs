//! Named pipes, for waiting on output the test does not hold the pipe of: a command the daemon
//! runs writes into one (its processes hold the write end, so end-of-file is the moment they
//! are all gone), or tmux copies a pane's output into one (`pipe-pane`).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::{io::AsyncReadExt, net::unix::pipe, sync::watch, task::JoinHandle};

/// How long a test waits on a FIFO before failing.
pub const FIFO_TIMEOUT: Duration = Duration::from_secs(20);

/// The reading end of a FIFO the test made.
pub struct Fifo {
    path: PathBuf,
    reader: pipe::Receiver,
    /// Everything read so far.
    pub seen: Vec<u8>,
}

impl Fifo {
    /// Make a FIFO at `path` and open it for reading without waiting for a writer. With
    /// `hold_open` the test also holds a write end, so readers never see end-of-file and writers
    /// may come and go (tmux's `pipe-pane`); without, end-of-file means every writer is gone.
    pub fn create(path: &Path, hold_open: bool) -> Self {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU)
            .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
        let reader = pipe::OpenOptions::new()
            .read_write(hold_open)
            .open_receiver(path)
            .unwrap_or_else(|e| panic!("open {} for reading: {e}", path.display()));
        Self {
            path: path.to_path_buf(),
            reader,
            seen: Vec::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Wait until more bytes arrive and read them; `false` at end-of-file.
    pub async fn more(&mut self) -> bool {
        let mut buf = [0u8; 8192];
        let n = self
            .reader
            .read(&mut buf)
            .await
            .unwrap_or_else(|e| panic!("read {}: {e}", self.path.display()));
        self.seen.extend_from_slice(&buf[..n]);
        n > 0
    }

    /// Read until what was read contains `needle` ([`FIFO_TIMEOUT`] at most).
    pub async fn read_until(&mut self, needle: &str) {
        let found = async {
            while !String::from_utf8_lossy(&self.seen).contains(needle) {
                assert!(
                    self.more().await,
                    "{} closed before {needle:?} came",
                    self.path.display()
                );
            }
        };
        tokio::time::timeout(FIFO_TIMEOUT, found)
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} within {FIFO_TIMEOUT:?}"));
    }

    /// Read it on a task of its own from now on, so writers never wait for the test, keeping
    /// only the count of arrivals (for output that is looked at elsewhere, like a tmux screen).
    pub fn drain(mut self) -> Drained {
        let (count, arrivals) = watch::channel(0u64);
        let task = tokio::spawn(async move {
            while self.more().await {
                self.seen.clear();
                count.send_modify(|n| *n += 1);
            }
        });
        Drained { arrivals, task }
    }

    /// Read until end-of-file: every process holding a write end is gone ([`FIFO_TIMEOUT`]).
    pub async fn closed(&mut self) {
        let closed = async { while self.more().await {} };
        tokio::time::timeout(FIFO_TIMEOUT, closed)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{} still had writers after {FIFO_TIMEOUT:?}",
                    self.path.display()
                )
            });
    }
}

/// A FIFO read on its own task ([`Fifo::drain`]); stops reading when dropped.
pub struct Drained {
    arrivals: watch::Receiver<u64>,
    task: JoinHandle<()>,
}

impl Drained {
    /// Take what arrived so far as seen: call before looking at what the output changed, so
    /// [`Drained::arrived`] then waits only for output that came later.
    pub fn mark_seen(&mut self) {
        self.arrivals.borrow_and_update();
    }

    /// Wait until output arrives after the last [`Drained::mark_seen`].
    pub async fn arrived(&mut self) {
        self.arrivals
            .changed()
            .await
            .expect("the FIFO reader task runs while this is held");
    }
}

impl Drop for Drained {
    fn drop(&mut self) {
        self.task.abort();
    }
}
