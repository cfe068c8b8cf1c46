//! Kernel confinement of everything the agent runs: terminal commands (foreground and
//! background), `execute_code`, cron's pre-run scripts, MCP stdio servers, voice helpers — every
//! child spawned through [`confine`]. The command judge asks before unusual actions; what must
//! never happen is stopped here, by the kernel, on the child before `exec`, so no program, link
//! or `/proc` path gets around it:
//!
//! - a private **mount namespace** (`mounts.rs`) in which the Hermes homes, the credential
//!   directories and the shell start-up files are read-only, and the secrets (`.env`,
//!   `auth.json`, the database and its journals, private keys, credential files), the daemon's
//!   socket and the user's service manager are covered by empty read-only files and directories;
//! - a **Landlock** domain (`landlock.rs`) that holds the covers in place (no mount calls), closes
//!   `/proc/<pid>/…` of every process outside the domain (the daemon, the owner's shells) and the
//!   abstract Unix sockets bound outside it;
//! - a **seccomp** filter (`seccomp.rs`) that refuses terminal injection and marks the process
//!   and all its descendants as the agent's, which the control plane reads (`is_agent`).
//!
//! What the kernel offers is probed once at start by confining a real child (`Confinement::probe`)
//! and reported by `status` and `doctor`; where a part is missing the others still apply and the
//! status says what is not enforced.

#![allow(unsafe_code)] // fork-time system calls; each unsafe block says why it is sound

mod landlock;
pub mod mounts;
pub mod own_process;
mod seccomp;
pub mod tcp_peer;

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub use mounts::Layout;
use mounts::{ChildMounts, Op, c_path};

/// What is enforced on a confined child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Mount namespace and Landlock: the whole boundary.
    Full,
    /// Landlock without a mount namespace (user namespaces refused): `/proc` of other processes
    /// and mount calls are closed, files are guarded by the command rules only.
    LandlockOnly,
    /// Neither: the command rules alone.
    None,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "landlock+namespace",
            Self::LandlockOnly => "landlock",
            Self::None => "none",
        }
    }
}

/// The confinement in force, for `status` and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub mode: Mode,
    /// The kernel's Landlock ABI, 0 without Landlock.
    pub landlock_abi: u32,
    /// Whether children carry the agent's mark, so the control plane can tell them apart.
    pub marked: bool,
    /// One sentence: what is enforced, and what is not and why.
    pub detail: String,
}

/// The agent's mount namespace: laid once by a short-lived child, kept alive by the daemon's
/// descriptors to it, joined by every confined child (`setns`), and laid again when its plan
/// changes (a secret created or replaced, a profile added). A namespace per child cost the
/// kernel's teardown of its mounts at every exit, a grace period the parent waits for; joining
/// costs two system calls.
struct Namespace {
    layout: Layout,
    empty_file: PathBuf,
    empty_dir: PathBuf,
    as_root: bool,
    /// The program the laying child runs (`bash -c 'read _'`, ended by closing its stdin).
    program: PathBuf,
    current: Mutex<Option<Arc<SharedNs>>>,
}

/// One laid namespace: its plan and descriptors of its namespaces.
struct SharedNs {
    plan: Vec<Op>,
    /// What the plan was computed from ([`Layout::fingerprint`]), updated when a changed
    /// fingerprint turned out to give the same plan.
    fingerprint: Mutex<Vec<Option<(u64, u64, i64)>>>,
    mnt: OwnedFd,
    /// The user namespace it belongs to, when the daemon is not root.
    user: Option<OwnedFd>,
}

impl Namespace {
    /// The namespace for the covers as they are now, laid again when they changed.
    fn current(&self) -> io::Result<Arc<SharedNs>> {
        let fingerprint = self.layout.fingerprint();
        let mut current = self
            .current
            .lock()
            .map_err(|_| io::Error::other("the namespace lock is poisoned"))?;
        if let Some(ns) = current.as_ref() {
            let mut seen = ns
                .fingerprint
                .lock()
                .map_err(|_| io::Error::other("the fingerprint lock is poisoned"))?;
            if *seen == fingerprint {
                return Ok(Arc::clone(ns));
            }
            if ns.plan == self.layout.plan() {
                *seen = fingerprint;
                return Ok(Arc::clone(ns));
            }
        }
        let plan = self.layout.plan();
        let mut ns = self.lay(plan)?;
        ns.fingerprint = Mutex::new(fingerprint);
        let ns = Arc::new(ns);
        *current = Some(Arc::clone(&ns));
        Ok(ns)
    }

    /// Start a child that makes the namespace and lays the covers, hold its namespaces by
    /// descriptor, and let it go.
    fn lay(&self, plan: Vec<Op>) -> io::Result<SharedNs> {
        use std::os::unix::process::CommandExt;
        let mounts = ChildMounts::new(&plan, &self.empty_file, &self.empty_dir, self.as_root)?;
        let mut command = std::process::Command::new(&self.program);
        command
            .args(["-c", "read _"])
            .current_dir("/")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: `enter` makes system calls only, on data made before the fork.
        unsafe {
            command.pre_exec(move || mounts.enter());
        }
        let mut child = command.spawn()?;
        let proc_dir = PathBuf::from(format!("/proc/{}/ns", child.id()));
        let held = std::fs::File::open(proc_dir.join("mnt")).and_then(|mnt| {
            let user = if self.as_root {
                None
            } else {
                Some(OwnedFd::from(std::fs::File::open(proc_dir.join("user"))?))
            };
            Ok((OwnedFd::from(mnt), user))
        });
        drop(child.stdin.take());
        let _ = child.wait();
        let (mnt, user) = held?;
        tracing::debug!(
            covers = plan.len(),
            "confinement: laid the agent's mount namespace"
        );
        Ok(SharedNs {
            plan,
            fingerprint: Mutex::new(Vec::new()),
            mnt,
            user,
        })
    }
}

/// The confinement every agent child gets; built once at start ([`Confinement::probe`]).
pub struct Confinement {
    mode: Mode,
    landlock_abi: Option<u32>,
    ruleset: Option<OwnedFd>,
    /// The marking filter; empty when seccomp filters cannot be installed here.
    filter: Vec<libc::sock_filter>,
    namespace: Option<Namespace>,
    /// How many seccomp filters the daemon itself carries (`None`: the kernel does not say).
    own_filters: Option<u32>,
    /// The daemon runs as root: its children lose the capabilities that reach around the
    /// covers ([`ROOT_CAPS_DROPPED`]).
    as_root: bool,
    detail: String,
}

/// Capabilities a root child loses (from its bounding set, so nothing it runs gets them back):
/// `CAP_SYS_PTRACE` (with it root reads `/proc/<pid>/environ` and `maps` of the daemon, which
/// is not dumpable, and Landlock closes only the rest of `/proc/<pid>`), `CAP_DAC_READ_SEARCH`
/// (`open_by_handle_at` opens a covered file by its handle), `CAP_SYS_MODULE` (kernel code),
/// `CAP_SYS_RAWIO` (`/dev/mem`, port I/O), `CAP_BPF` and `CAP_PERFMON` (reading kernel and
/// process memory).
const ROOT_CAPS_DROPPED: &[libc::c_int] = &[19, 2, 16, 17, 39, 38];

/// Drop [`ROOT_CAPS_DROPPED`] from the bounding set (in the child). A capability the kernel does
/// not know is skipped. Async-signal-safe.
fn drop_root_powers() -> io::Result<()> {
    for cap in ROOT_CAPS_DROPPED {
        // SAFETY: prctl on integers.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, *cap, 0, 0, 0) };
        if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

impl std::fmt::Debug for Confinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confinement")
            .field("mode", &self.mode)
            .field("landlock_abi", &self.landlock_abi)
            .field("marked", &!self.filter.is_empty())
            .finish_non_exhaustive()
    }
}

/// What the child runs between `fork` and `exec`, all of it made before the fork.
struct ChildPlan {
    namespace: Option<Arc<SharedNs>>,
    /// Entered after joining the namespace (`setns` moves a process to the namespace's root).
    cwd: CString,
    confinement: Arc<Confinement>,
}

impl ChildPlan {
    /// In the child: the namespace and its covers, then Landlock, then the mark. Order matters:
    /// Landlock forbids the mount calls, so the covers come first.
    fn enter(&self) -> io::Result<()> {
        if let Some(ns) = &self.namespace {
            // SAFETY: setns and chdir on live descriptors and a NUL-terminated path.
            unsafe {
                if let Some(user) = &ns.user
                    && libc::setns(user.as_raw_fd(), libc::CLONE_NEWUSER) != 0
                {
                    return Err(io::Error::last_os_error());
                }
                if libc::setns(ns.mnt.as_raw_fd(), libc::CLONE_NEWNS) != 0
                    || libc::chdir(self.cwd.as_ptr()) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        if self.confinement.as_root {
            drop_root_powers()?;
        }
        if let Some(ruleset) = &self.confinement.ruleset {
            landlock::restrict_self(ruleset.as_raw_fd())?;
        }
        let filter = &self.confinement.filter;
        if !filter.is_empty() {
            let program = libc::sock_fprog {
                len: u16::try_from(filter.len()).unwrap_or(u16::MAX),
                filter: filter.as_ptr().cast_mut(),
            };
            seccomp::install(&program)?;
        }
        Ok(())
    }
}

impl Confinement {
    /// Find out what this kernel enforces for a daemon laid out as `layout`, by confining a real
    /// child (`bash -c :`) with each part and dropping the parts that fail. `state_dir` (inside the
    /// daemon's home) holds the empty file and directory that hidden paths are covered with.
    pub fn probe(layout: Layout, state_dir: &Path, probe_program: &Path) -> Arc<Self> {
        let own_filters = seccomp::filters_of(Path::new("/proc/self"));
        let landlock_abi = landlock::abi_version();
        let ruleset = landlock_abi.and_then(|abi| landlock::ruleset(abi).ok());
        let as_root = nix::unistd::geteuid().is_root();
        let namespace = match mounts::ensure_empties(state_dir) {
            Ok((empty_file, empty_dir)) => Some(Namespace {
                layout,
                empty_file,
                empty_dir,
                as_root,
                program: probe_program.to_path_buf(),
                current: Mutex::new(None),
            }),
            Err(e) => {
                tracing::warn!(dir = %state_dir.display(), error = %e, "confinement: cannot make the empty covers");
                None
            }
        };
        let filter = if own_filters.is_some() {
            seccomp::program()
        } else {
            Vec::new()
        };
        let mut candidate = Self {
            mode: Mode::Full,
            landlock_abi,
            ruleset,
            filter,
            namespace,
            own_filters,
            as_root,
            detail: String::new(),
        };
        let mut lost = Vec::new();
        loop {
            if candidate.ruleset.is_none() && candidate.namespace.is_some() {
                // Without Landlock a child could take the covers off or read around them
                // through /proc/<pid>/root: a namespace alone is no boundary.
                candidate.namespace = None;
                lost.push(
                    "Landlock is not available (Linux 5.13+ with landlock in lsm=)".to_string(),
                );
            }
            let probe = Arc::new(candidate);
            match probe.try_child(probe_program) {
                Ok(()) => {
                    candidate =
                        Arc::into_inner(probe).unwrap_or_else(|| Self::none(lost.join("; ")));
                    break;
                }
                Err(e) => {
                    let mut failed =
                        Arc::into_inner(probe).unwrap_or_else(|| Self::none(String::new()));
                    if failed.namespace.take().is_some() {
                        lost.push(format!(
                            "no private mount namespace ({e}: user namespaces refused?)"
                        ));
                    } else if failed.ruleset.take().is_some() {
                        lost.push(format!("Landlock refused ({e})"));
                    } else if !failed.filter.is_empty() {
                        failed.filter.clear();
                        lost.push(format!("seccomp refused ({e})"));
                    } else {
                        lost.push(format!("a confined child cannot start ({e})"));
                        candidate = failed;
                        break;
                    }
                    candidate = failed;
                }
            }
        }
        candidate.mode = match (&candidate.namespace, &candidate.ruleset) {
            (Some(_), Some(_)) => Mode::Full,
            (None, Some(_)) => Mode::LandlockOnly,
            _ => Mode::None,
        };
        candidate.detail = describe(candidate.mode, !candidate.filter.is_empty(), &lost);
        match candidate.mode {
            Mode::Full => tracing::info!(
                mode = candidate.mode.as_str(),
                "confinement: {}",
                candidate.detail
            ),
            _ => tracing::warn!(
                mode = candidate.mode.as_str(),
                "confinement: {}",
                candidate.detail
            ),
        }
        Arc::new(candidate)
    }

    fn none(detail: String) -> Self {
        Self {
            mode: Mode::None,
            landlock_abi: None,
            ruleset: None,
            filter: Vec::new(),
            namespace: None,
            own_filters: None,
            as_root: false,
            detail,
        }
    }

    /// Start `program -c :` confined, and wait for it.
    fn try_child(self: &Arc<Self>, program: &Path) -> io::Result<()> {
        let mut command = std::process::Command::new(program);
        command
            .args(["-c", ":"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let cwd = std::env::temp_dir();
        let plan = Arc::new(self.child_plan(&cwd)?);
        command.current_dir(&cwd);
        // SAFETY: `enter` makes system calls only, on data made before the fork.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || plan.enter());
        }
        let status = command.status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("the probe exited with {status}")))
        }
    }

    fn child_plan(self: &Arc<Self>, cwd: &Path) -> io::Result<ChildPlan> {
        let namespace = match &self.namespace {
            Some(ns) => Some(ns.current()?),
            None => None,
        };
        Ok(ChildPlan {
            namespace,
            cwd: c_path(cwd)?,
            confinement: Arc::clone(self),
        })
    }

    /// Confine the child `command` will start in `cwd` (which must be the command's working
    /// directory). Fails only when the plan cannot be made (a path with a NUL byte).
    pub fn apply(
        self: &Arc<Self>,
        command: &mut tokio::process::Command,
        cwd: &Path,
    ) -> io::Result<()> {
        if self.mode == Mode::None && self.filter.is_empty() {
            return Ok(());
        }
        let plan = self.child_plan(cwd)?;
        // SAFETY: `enter` makes system calls only, on data made before the fork.
        unsafe {
            command.pre_exec(move || plan.enter());
        }
        Ok(())
    }

    /// What is enforced.
    pub fn status(&self) -> Status {
        Status {
            mode: self.mode,
            landlock_abi: self.landlock_abi.unwrap_or(0),
            marked: !self.filter.is_empty(),
            detail: self.detail.clone(),
        }
    }

    /// Whether the process `pid` (a peer of the control socket) is the agent's: it carries more
    /// seccomp filters than the daemon, so a confined child started it. A process that is gone
    /// or unreadable counts as the agent's; without the mark nobody does.
    pub fn is_agent(&self, pid: i32) -> bool {
        let Some(own) = self.own_filters.filter(|_| !self.filter.is_empty()) else {
            return false;
        };
        seccomp::filters_of(&Path::new("/proc").join(pid.to_string())).is_none_or(|n| n > own)
    }

    /// The covers of the agent's namespace, in words (for `doctor`).
    pub fn covers(&self) -> Vec<String> {
        self.namespace
            .as_ref()
            .map(|ns| ns.layout.plan().iter().map(mounts::describe).collect())
            .unwrap_or_default()
    }
}

fn describe(mode: Mode, marked: bool, lost: &[String]) -> String {
    let enforced = match mode {
        Mode::Full => {
            "the kernel hides the secrets and the daemon's socket from every process the agent runs, keeps the Hermes homes and shell start-up files read-only, and closes /proc of other processes"
        }
        Mode::LandlockOnly => {
            "the kernel closes /proc of other processes and mount calls to the agent's processes; secret files are guarded by the command rules only"
        }
        Mode::None => "no kernel confinement: the command rules alone guard secret files",
    };
    let marked = if marked {
        "; the agent's processes are marked and get no control of the daemon"
    } else {
        "; the agent's processes cannot be told apart on the control socket"
    };
    if lost.is_empty() {
        format!("{enforced}{marked}")
    } else {
        format!("{enforced}{marked} (not enforced: {})", lost.join("; "))
    }
}

static CURRENT: OnceLock<Arc<Confinement>> = OnceLock::new();

/// Make `confinement` the one every spawn uses (once, at start).
pub fn install(confinement: Arc<Confinement>) {
    let _ = CURRENT.set(confinement);
}

/// The confinement in force, once the daemon has installed one.
pub fn current() -> Option<&'static Arc<Confinement>> {
    CURRENT.get()
}

/// Confine the child `command` will start in `cwd`: the one call every spawn of the agent's
/// makes. Without an installed confinement (unit tests, tools run outside the daemon) nothing.
pub fn confine(command: &mut tokio::process::Command, cwd: &Path) -> io::Result<()> {
    match current() {
        Some(confinement) => confinement.apply(command, cwd),
        None => Ok(()),
    }
}
