//! A terminal for tests: a tmux server of its own running a `hermesctl` command (`chat`,
//! `tui`), its output copied to a FIFO so a test waits for the screen to change, never for time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support fails by panicking

use std::{os::unix::fs::OpenOptionsExt, process::Command, time::Duration};

use crate::{
    TestHome,
    fifo::{Drained, Fifo},
};

/// A tmux server of its own running a `hermesctl` command for `home`, copying the pane's output
/// into a FIFO so a test can wait for the screen to change.
pub struct Tmux {
    socket: String,
    output: Drained,
    /// The pane's terminal, to see whether the line editor has it (raw mode).
    tty: std::fs::File,
}

impl Tmux {
    /// Run `hermesctl ARGS` in a new pane; the pane stays after it exits (its last words can
    /// be read), with `EXIT=<status>` printed.
    pub fn start(home: &TestHome, args: &str) -> Self {
        let ctl = Self::hermesctl(home, args);
        Self::start_script(home, &format!("{ctl}; echo EXIT=$?; sleep 600"))
    }

    /// The shell words that run `hermesctl ARGS` for `home` in a clean environment.
    pub fn hermesctl(home: &TestHome, args: &str) -> String {
        format!(
            "env -i PATH={} HOME={} HERMES_HOME={} TERM=xterm {} {args}",
            std::env::var("PATH").unwrap(),
            home.user_home().display(),
            home.path().display(),
            crate::binary("hermesctl").display()
        )
    }

    /// Run a shell `script` in a new 120×50 pane.
    pub fn start_script(home: &TestHome, script: &str) -> Self {
        let socket = format!("hermes-tmux-{}-{}", std::process::id(), fastrand_suffix());
        let line = script.to_string();
        let dir = home.user_home().display().to_string();
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-c",
                &dir,
                "-x",
                "120",
                "-y",
                "50",
                &line,
            ])
            .status()
            .expect("tmux must be installed");
        assert!(status.success());
        // From here on every byte the pane gets is also written to the FIFO; what came before
        // is on the screen already.
        let fifo = Fifo::create(&home.path().join(format!("{socket}.out")), true);
        let copy = format!("cat >> {}", fifo.path().display());
        let status = Command::new("tmux")
            .args(["-L", &socket, "pipe-pane", "-t", "0", &copy])
            .status()
            .unwrap();
        assert!(status.success());
        let out = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "display-message",
                "-p",
                "-t",
                "0",
                "#{pane_tty}",
            ])
            .output()
            .unwrap();
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NOCTTY.bits())
            .open(String::from_utf8_lossy(&out.stdout).trim())
            .unwrap();
        Self {
            socket,
            output: fifo.drain(),
            tty,
        }
    }

    /// The pid of the pane's shell.
    pub fn pane_pid(&self) -> i32 {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "display-message",
                "-p",
                "-t",
                "0",
                "#{pane_pid}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["-L", &self.socket, "send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(Command::new("tmux").args(&args).status().unwrap().success());
    }

    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "capture-pane",
                "-p",
                // Wrapped lines joined: a session id at the end of a line is read whole.
                "-J",
                "-t",
                "0",
                "-S",
                "-200",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen shows `text` (30 s at most: a loaded machine is slow).
    pub async fn wait_for(&mut self, text: &str) -> String {
        self.wait_until(&format!("the screen shows {text:?}"), |tmux| {
            let screen = tmux.screen();
            screen.contains(text).then_some(screen)
        })
        .await
    }

    /// Type `text` and Enter at a prompt, once the line editor reads the terminal. (Keys typed
    /// while a turn is still ending are kept for the next prompt without their Enter.)
    pub async fn line(&mut self, text: &str) {
        self.wait_until("the line editor reads the terminal", |tmux| {
            tmux.editing().then_some(())
        })
        .await;
        self.keys(&[text, "Enter"]);
    }

    /// Whether rustyline has the terminal: its raw mode turns off ICRNL, which the chat's
    /// reader of keys during a turn leaves on. (It switches before drawing the prompt, so
    /// pane output follows the switch.)
    pub fn editing(&self) -> bool {
        use nix::sys::termios::{InputFlags, LocalFlags, tcgetattr};
        let mode = tcgetattr(&self.tty).unwrap();
        !mode.input_flags.contains(InputFlags::ICRNL)
            && !mode.local_flags.contains(LocalFlags::ICANON)
    }

    /// Look at the pane until `check` yields (30 s at most), again each time the pane gets
    /// output. tmux parses what it reads into the screen before serving a later command, so
    /// output counted on the FIFO is on the screen when it is looked at.
    pub async fn wait_until<T>(&mut self, what: &str, check: impl Fn(&Self) -> Option<T>) -> T {
        let looked = async {
            loop {
                self.output.mark_seen();
                if let Some(found) = check(self) {
                    return found;
                }
                self.output.arrived().await;
            }
        };
        match tokio::time::timeout(Duration::from_secs(30), looked).await {
            Ok(found) => found,
            Err(_) => panic!("waited in vain until {what}:\n{}", self.screen()),
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn fastrand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}
