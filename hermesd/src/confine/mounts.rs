//! The private mount namespace of a confined child: which paths are covered and how (`Plan`,
//! built in the daemon before each spawn from the path policy's lists), and the system calls
//! that enter the namespace and lay the covers (in the child, after `fork`, before `exec`).
//!
//! Four kinds of cover, laid shallowest path first so a deeper one wins inside a shallower one:
//! - **read-only**: the path is bound onto itself and marked read-only, with everything below
//!   (the Hermes homes, the credential directories of `~`, the shell start-up files);
//! - **writable**: a hole in a read-only cover (a home's `cache/`; the user's home or working
//!   directory when a Hermes home holds it, as in the tests' layout);
//! - **hidden file**: an empty, read-only file is bound over it (`.env`, `auth.json`, the
//!   database and its journals, private keys, the daemon's socket): it reads as empty, and
//!   writing it fails;
//! - **hidden directory**: an empty, read-only directory is bound over it.
//!
//! The covers exist only in the child's namespace: the daemon and the owner see the real files.
//! Renaming or deleting a covered file from outside takes the cover off in the child (the
//! kernel detaches mounts whose mount point goes away), so a long-running child could see a
//! file written by rename after it started; it can never see one that existed when it started.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::policy::paths::{PathPolicy, WriteVerdict, lists};

/// How one path is covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cover {
    ReadOnly,
    Writable,
    HideFile,
    HideDir,
}

/// One cover: a kind and a real path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub cover: Cover,
    pub path: PathBuf,
    /// The covered file's identity (device, inode) when the plan was made: a file replaced by
    /// rename since then is another file, and the namespace is laid again.
    pub identity: (u64, u64),
}

/// The places of one daemon that covers are computed from.
#[derive(Debug, Clone)]
pub struct Layout {
    pub policy: PathPolicy,
    /// The daemon's socket.
    pub socket: PathBuf,
    /// `XDG_RUNTIME_DIR`, when set: its `hermes/` (socket, gateway locks), `bus` and `systemd/`
    /// (the user's service manager, which would start a process outside the confinement).
    pub runtime_dir: Option<PathBuf>,
    pub uid: u32,
}

/// Credential directories whose entries are judged one by one (the public ones stay visible).
const ENTRY_JUDGED_DIRS: &[&str] = lists::USER_PROTECTED_DIRS;
/// What a Hermes home's children may write: results spilled by tools, voice, downloads.
const HOME_WRITABLE: &[&str] = &["cache"];

fn real(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// A path outside the kernel's virtual trees (a symlink into `/proc` or `/dev` is not covered).
fn coverable(path: &Path) -> bool {
    !["/proc", "/sys", "/dev"]
        .iter()
        .any(|virt| path.starts_with(virt))
}

impl Layout {
    /// The Hermes homes that exist: the daemon's, the root and each profile of the root.
    fn homes(&self) -> Vec<PathBuf> {
        let mut homes = vec![self.policy.hermes_home().to_path_buf()];
        homes.push(self.policy.hermes_root().to_path_buf());
        let mut profiles = Vec::new();
        for home in &homes {
            if let Ok(entries) = std::fs::read_dir(home.join("profiles")) {
                profiles.extend(entries.flatten().map(|e| e.path()));
            }
        }
        homes.extend(profiles);
        homes.into_iter().filter_map(|h| real(&h)).collect()
    }

    /// What the plan depends on, read cheaply (one `stat` a path, no symlink resolution): the
    /// identity of every path the plan looks at, present or not, and the modification time of
    /// the directories it lists. Equal fingerprints mean an equal plan, so a spawn computes the
    /// plan only when this changed. (The files' own times are left out: the database's journal
    /// changes at every write and is still the same file.)
    pub fn fingerprint(&self) -> Vec<Option<(u64, u64, i64)>> {
        use std::os::unix::fs::MetadataExt;
        let mut paths: Vec<(PathBuf, bool)> = Vec::with_capacity(64);
        let mut homes = vec![
            self.policy.hermes_home().to_path_buf(),
            self.policy.hermes_root().to_path_buf(),
        ];
        for home in homes.clone() {
            if let Ok(entries) = std::fs::read_dir(home.join("profiles")) {
                homes.extend(entries.flatten().map(|e| e.path()));
            }
            paths.push((home.join("profiles"), true));
        }
        for home in &homes {
            paths.push((home.clone(), false));
            let names = lists::HOME_SECRETS
                .iter()
                .chain(lists::HOME_STATE)
                .chain(lists::HOME_SECRET_DIRS)
                .chain(HOME_WRITABLE);
            paths.extend(names.map(|name| (home.join(name), false)));
        }
        paths.push((self.socket.clone(), false));
        if let Some(runtime) = &self.runtime_dir {
            paths.extend(["hermes", "bus", "systemd"].map(|n| (runtime.join(n), false)));
        }
        paths.push((PathBuf::from(format!("/tmp/tmux-{}", self.uid)), false));
        if let Some(user) = self.policy.user_home() {
            paths.push((user.to_path_buf(), false));
            let names = lists::USER_SECRETS.iter().chain(lists::SHELL_STARTUP);
            paths.extend(names.map(|name| (user.join(name), false)));
            for dir in ENTRY_JUDGED_DIRS {
                let dir = user.join(dir);
                if let Ok(entries) = std::fs::read_dir(&dir) {
                    paths.extend(entries.flatten().map(|e| (e.path(), false)));
                }
                paths.push((dir, true));
            }
        }
        paths
            .iter()
            .map(|(path, listed)| {
                let meta = std::fs::metadata(path).ok()?;
                let time = if *listed {
                    meta.mtime_nsec() + meta.mtime() * 1_000_000_000
                } else {
                    0
                };
                Some((meta.dev(), meta.ino(), time))
            })
            .collect()
    }

    /// The covers of the agent's namespace, shallowest first.
    pub fn plan(&self) -> Vec<Op> {
        let mut ops = Ops::default();
        for home in self.homes() {
            let judged = lists::HOME_SECRETS
                .iter()
                .chain(lists::HOME_STATE)
                .chain(lists::HOME_SECRET_DIRS);
            for name in judged {
                let path = home.join(name);
                if self.policy.check_read(&path).is_err() {
                    ops.add(Cover::HideFile, &path);
                }
            }
            ops.add(Cover::ReadOnly, &home);
            for name in HOME_WRITABLE {
                ops.add(Cover::Writable, &home.join(name));
            }
        }
        ops.add(Cover::HideFile, &self.socket);
        if let Some(runtime) = &self.runtime_dir {
            ops.add(Cover::HideDir, &runtime.join("hermes"));
            ops.add(Cover::HideFile, &runtime.join("bus"));
            ops.add(Cover::HideDir, &runtime.join("systemd"));
        }
        ops.add(
            Cover::HideDir,
            Path::new(&format!("/tmp/tmux-{}", self.uid)),
        );
        if let Some(user) = self.policy.user_home() {
            for name in lists::USER_SECRETS {
                ops.add(Cover::HideFile, &user.join(name));
            }
            for dir in ENTRY_JUDGED_DIRS {
                let dir = user.join(dir);
                if let Ok(entries) = std::fs::read_dir(&dir) {
                    for entry in entries.flatten() {
                        let path = entry.path();
                        let judged = real(&path).unwrap_or_else(|| path.clone());
                        if self.policy.check_read(&judged).is_err() {
                            ops.add(Cover::HideFile, &path);
                        }
                    }
                }
                ops.add(Cover::ReadOnly, &dir);
            }
            for name in lists::SHELL_STARTUP {
                ops.add(Cover::ReadOnly, &user.join(name));
            }
        }
        // A hole for the work: the user's home, when a read-only cover holds it (a Hermes home
        // that holds the user's home, as in the tests' layout) and the policy lets the agent
        // write there.
        let places = [self.policy.user_home().map(Path::to_path_buf)];
        for place in places.into_iter().flatten().filter_map(|p| real(&p)) {
            let inside_read_only = ops.0.iter().any(|op| {
                op.cover == Cover::ReadOnly && place.starts_with(&op.path) && place != op.path
            });
            if inside_read_only
                && self.policy.check_write(&place.join("x")) == WriteVerdict::Allowed
            {
                ops.add(Cover::Writable, &place);
            }
        }
        let mut ops = ops.0;
        ops.sort_by_key(|op| op.path.components().count());
        ops
    }
}

/// Covers being gathered: each real path once, the first kind given for it winning.
#[derive(Default)]
struct Ops(Vec<Op>);

impl Ops {
    fn add(&mut self, cover: Cover, path: &Path) {
        use std::os::unix::fs::MetadataExt;
        let Some(path) = real(path).filter(|p| coverable(p)) else {
            return;
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            return;
        };
        let identity = (meta.dev(), meta.ino());
        let cover = match (cover, meta.is_dir()) {
            (Cover::HideFile | Cover::HideDir, true) => Cover::HideDir,
            (Cover::HideFile | Cover::HideDir, false) => Cover::HideFile,
            (other, _) => other,
        };
        if !self.0.iter().any(|op| op.path == path) {
            self.0.push(Op {
                cover,
                path,
                identity,
            });
        }
    }
}

/// What the child that lays the namespace needs, made before `fork`: nothing is allocated
/// after it.
#[derive(Debug)]
pub struct ChildMounts {
    /// `Some` when the child makes a user namespace first (not root): the maps to write.
    user: Option<UserMaps>,
    empty_file: CString,
    empty_dir: CString,
    ops: Vec<(Cover, CString)>,
}

#[derive(Debug)]
struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

pub(super) fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("{} holds a NUL byte", path.display())))
}

impl ChildMounts {
    /// The child's part of `ops`, covering hidden files with `empty_file` and hidden directories
    /// with `empty_dir`; `as_root` when the daemon runs as root (no user namespace needed).
    pub fn new(ops: &[Op], empty_file: &Path, empty_dir: &Path, as_root: bool) -> io::Result<Self> {
        let user = (!as_root).then(|| {
            let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
            UserMaps {
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            }
        });
        Ok(Self {
            user,
            empty_file: c_path(empty_file)?,
            empty_dir: c_path(empty_dir)?,
            ops: ops
                .iter()
                .map(|op| Ok((op.cover, c_path(&op.path)?)))
                .collect::<io::Result<_>>()?,
        })
    }

    /// In the child that lays the namespace: enter a new mount namespace (and user namespace
    /// when not root), stop mount events flowing back out, and lay every cover. A cover whose path has gone since
    /// the plan was made is skipped; any other failure stops the spawn.
    pub fn enter(&self) -> io::Result<()> {
        match &self.user {
            Some(maps) => {
                check(unsafe_unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
                write_proc(c"/proc/self/setgroups", b"deny")?;
                write_proc(c"/proc/self/uid_map", &maps.uid_map)?;
                write_proc(c"/proc/self/gid_map", &maps.gid_map)?;
            }
            None => check(unsafe_unshare(libc::CLONE_NEWNS))?,
        }
        check(sys_mount(None, c"/", libc::MS_REC | libc::MS_SLAVE))?;
        for (cover, path) in &self.ops {
            let laid = match cover {
                Cover::ReadOnly => check(sys_mount(Some(path), path, libc::MS_BIND | libc::MS_REC))
                    .and_then(|()| set_read_only(path, true, true)),
                Cover::Writable => check(sys_mount(Some(path), path, libc::MS_BIND))
                    .and_then(|()| set_read_only(path, false, false)),
                Cover::HideFile => check(sys_mount(Some(&self.empty_file), path, libc::MS_BIND))
                    .and_then(|()| set_read_only(path, true, false)),
                Cover::HideDir => check(sys_mount(Some(&self.empty_dir), path, libc::MS_BIND))
                    .and_then(|()| set_read_only(path, true, false)),
            };
            match laid {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                other => other?,
            }
        }
        Ok(())
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn unsafe_unshare(flags: libc::c_int) -> libc::c_int {
    // SAFETY: unshare takes an integer.
    unsafe { libc::unshare(flags) }
}

fn sys_mount(
    source: Option<&CString>,
    target: &std::ffi::CStr,
    flags: libc::c_ulong,
) -> libc::c_int {
    let source = source.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is a NUL-terminated string that outlives the call, or null.
    unsafe {
        libc::mount(
            source,
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    }
}

/// Mark the mount at `path` read-only (`on`) or writable, with everything below it when
/// `recursive` (`mount_setattr`, Linux 5.12: it keeps the flags the mount had, which a remount
/// in a user namespace must repeat exactly).
fn set_read_only(path: &std::ffi::CStr, on: bool, recursive: bool) -> io::Result<()> {
    let attr = libc::mount_attr {
        attr_set: if on { libc::MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if on { 0 } else { libc::MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: `path` is NUL-terminated and `attr` a valid struct of the size passed.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Write `data` to a `/proc/self` file in one call.
fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; `data` is a live slice; the descriptor is closed here.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if usize::try_from(written).ok() == Some(data.len()) {
            Ok(())
        } else {
            Err(error)
        }
    }
}

/// The empty file and directory hidden paths are covered with, in `dir` (a place the children
/// cannot write: inside the daemon's read-only home), made or repaired when needed.
pub fn ensure_empties(dir: &Path) -> io::Result<(PathBuf, PathBuf)> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let (file, empty_dir) = (dir.join("empty"), dir.join("empty.d"));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let file_ok = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file() && m.len() == 0);
    if !file_ok {
        let _ = std::fs::remove_file(&file);
        std::fs::write(&file, b"")?;
    }
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o400))?;
    let dir_ok = std::fs::read_dir(&empty_dir).is_ok_and(|mut d| d.next().is_none());
    if !dir_ok {
        let _ = std::fs::remove_dir_all(&empty_dir);
        let _ = std::fs::remove_file(&empty_dir);
        std::fs::DirBuilder::new().mode(0o500).create(&empty_dir)?;
    }
    Ok((file, empty_dir))
}

/// For logs and status: a cover in words.
pub fn describe(op: &Op) -> String {
    let what = match op.cover {
        Cover::ReadOnly => "read-only",
        Cover::Writable => "writable",
        Cover::HideFile | Cover::HideDir => "hidden",
    };
    format!(
        "{what} {}",
        Path::new(OsStr::new(op.path.as_os_str())).display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(root: &Path, hermes: &Path, user: &Path) -> Layout {
        Layout {
            policy: PathPolicy::new(hermes, Some(user)),
            socket: hermes.join("hermesd.sock"),
            runtime_dir: Some(root.join("run")),
            uid: 4242,
        }
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    fn cover_of(ops: &[Op], path: &Path) -> Option<Cover> {
        let real = std::fs::canonicalize(path).ok()?;
        ops.iter().find(|op| op.path == real).map(|op| op.cover)
    }

    #[test]
    fn a_users_layout_is_covered_from_the_policys_lists() {
        let root = tempfile::tempdir().unwrap();
        let user = root.path().join("home");
        let hermes = user.join(".hermes");
        for file in [
            ".env",
            "auth.json",
            "hermesd.db",
            "hermesd.db-wal",
            "config.yaml",
            "SOUL.md",
        ] {
            touch(&hermes.join(file));
        }
        touch(&hermes.join("profiles/work/.env"));
        std::fs::create_dir_all(hermes.join("cache")).unwrap();
        std::fs::create_dir_all(hermes.join("skills")).unwrap();
        for file in [
            ".ssh/id_ed25519",
            ".ssh/id_ed25519.pub",
            ".ssh/known_hosts",
            ".bashrc",
            ".netrc",
        ] {
            touch(&user.join(file));
        }
        touch(&root.path().join("run/bus"));
        std::fs::create_dir_all(root.path().join("run/hermes")).unwrap();
        let ops = layout(root.path(), &hermes, &user).plan();

        assert_eq!(cover_of(&ops, &hermes), Some(Cover::ReadOnly));
        assert_eq!(cover_of(&ops, &hermes.join("cache")), Some(Cover::Writable));
        for hidden in [
            ".env",
            "auth.json",
            "hermesd.db",
            "hermesd.db-wal",
            "profiles/work/.env",
        ] {
            assert_eq!(
                cover_of(&ops, &hermes.join(hidden)),
                Some(Cover::HideFile),
                "{hidden}"
            );
        }
        assert_eq!(
            cover_of(&ops, &hermes.join("config.yaml")),
            None,
            "read-only with its home"
        );
        assert_eq!(
            cover_of(&ops, &user.join(".ssh/id_ed25519")),
            Some(Cover::HideFile)
        );
        assert_eq!(cover_of(&ops, &user.join(".ssh/id_ed25519.pub")), None);
        assert_eq!(cover_of(&ops, &user.join(".ssh/known_hosts")), None);
        assert_eq!(cover_of(&ops, &user.join(".ssh")), Some(Cover::ReadOnly));
        assert_eq!(cover_of(&ops, &user.join(".bashrc")), Some(Cover::ReadOnly));
        assert_eq!(cover_of(&ops, &user.join(".netrc")), Some(Cover::HideFile));
        assert_eq!(
            cover_of(&ops, &root.path().join("run/bus")),
            Some(Cover::HideFile)
        );
        assert_eq!(
            cover_of(&ops, &root.path().join("run/hermes")),
            Some(Cover::HideDir)
        );
        assert_eq!(
            cover_of(&ops, &user),
            None,
            "the user's home is not covered"
        );
        let depths: Vec<usize> = ops.iter().map(|op| op.path.components().count()).collect();
        assert!(depths.is_sorted(), "shallowest first: {ops:?}");
    }

    #[test]
    fn a_home_that_holds_the_users_home_leaves_it_writable_and_a_replaced_file_is_a_new_plan() {
        let root = tempfile::tempdir().unwrap();
        let hermes = root.path().join("h");
        let user = hermes.join("u");
        touch(&hermes.join(".env"));
        touch(&user.join(".bashrc"));
        let layout = layout(root.path(), &hermes, &user);
        let ops = layout.plan();
        assert_eq!(cover_of(&ops, &hermes), Some(Cover::ReadOnly));
        assert_eq!(cover_of(&ops, &user), Some(Cover::Writable));
        assert_eq!(cover_of(&ops, &user.join(".bashrc")), Some(Cover::ReadOnly));
        assert_eq!(layout.plan(), ops, "nothing changed, the same plan");
        let replacement = hermes.join(".env.new");
        touch(&replacement);
        std::fs::rename(&replacement, hermes.join(".env")).unwrap();
        assert_ne!(
            layout.plan(),
            ops,
            "a file replaced by rename is another file"
        );
    }
}
