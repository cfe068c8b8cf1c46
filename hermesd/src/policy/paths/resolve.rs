//! From the text a tool was given to the real path a rule decides on: `~` and `$HOME` /
//! `$HERMES_HOME` expanded against the daemon's own homes (never the process environment),
//! relative paths joined to the working directory, `.` and `..` removed, and every symlink
//! followed — also a dangling one, since writing through it creates its target.

use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution follows before it gives up (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

/// `text` with a leading `~`, `~/`, `$HOME`, `${HOME}`, `$HERMES_HOME` or `${HERMES_HOME}`
/// replaced; other text unchanged. `~user` is left alone.
pub fn expand(text: &str, user_home: Option<&Path>, hermes_home: &Path) -> PathBuf {
    let home_prefixes: [(&str, Option<&Path>); 6] = [
        ("${HERMES_HOME}", Some(hermes_home)),
        ("$HERMES_HOME", Some(hermes_home)),
        ("${HOME}", user_home),
        ("$HOME", user_home),
        ("~", user_home),
        ("", None),
    ];
    for (prefix, base) in home_prefixes {
        let (Some(base), Some(rest)) = (base, text.strip_prefix(prefix)) else {
            continue;
        };
        if rest.is_empty() {
            return base.to_path_buf();
        }
        if let Some(rest) = rest.strip_prefix('/') {
            return base.join(rest);
        }
    }
    PathBuf::from(text)
}

/// `path` made absolute against `cwd`, with `.` and `..` removed lexically.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The path the kernel would reach through `path` (absolute): symlinks followed component by
/// component, including a final dangling one; the part that does not exist yet is kept as given.
pub fn real(path: &Path) -> PathBuf {
    real_below(path, &[])
}

/// [`real`] of `path` (absolute, without `.` or `..`), given directories known to be real (no
/// symlink in them): the components `path` shares with the longest of them are not looked at
/// again. Once a component is missing, nothing below it is looked up either.
pub fn real_below(path: &Path, known: &[&Path]) -> PathBuf {
    let shared = known
        .iter()
        .map(|base| {
            path.components()
                .zip(base.components())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0);
    let mut done: PathBuf = path.components().take(shared).collect();
    if done.as_os_str().is_empty() {
        done.push("/");
    }
    let mut pending: Vec<std::ffi::OsString> = path
        .components()
        .skip(shared)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut links = 0;
    let mut missing = false;
    while let Some(part) = pending.pop() {
        if part == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        if missing {
            done = next;
            continue;
        }
        let target = match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                std::fs::read_link(&next).ok()
            }
            Ok(_) => None,
            Err(_) => {
                // Nothing below a missing (or unreadable) component can be looked up.
                missing = true;
                None
            }
        };
        let Some(target) = target else {
            done = next;
            continue;
        };
        links += 1;
        if target.is_absolute() {
            done = PathBuf::from("/");
        }
        for c in target.components().rev() {
            match c {
                Component::Normal(p) => pending.push(p.to_os_string()),
                Component::ParentDir => pending.push("..".into()),
                _ => {}
            }
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_homes_and_removes_dot_dot() {
        let user = Path::new("/home/u");
        let hermes = Path::new("/srv/h");
        assert_eq!(
            expand("~/x", Some(user), hermes),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(expand("~", Some(user), hermes), PathBuf::from("/home/u"));
        assert_eq!(expand("$HOME/x", Some(user), hermes), user.join("x"));
        assert_eq!(
            expand("${HERMES_HOME}/.env", Some(user), hermes),
            hermes.join(".env")
        );
        assert_eq!(
            expand("~bob/x", Some(user), hermes),
            PathBuf::from("~bob/x")
        );
        assert_eq!(
            expand("$HOMEX/y", Some(user), hermes),
            PathBuf::from("$HOMEX/y")
        );
        assert_eq!(
            absolute(Path::new("a/../../b/./c"), Path::new("/w/p")),
            PathBuf::from("/w/b/c")
        );
    }

    #[test]
    fn follows_symlinks_including_dangling_ones() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        std::os::unix::fs::symlink("real/config.yaml", base.join("dangling")).unwrap();
        assert_eq!(real(&base.join("link/f")), base.join("real/f"));
        assert_eq!(real(&base.join("dangling")), base.join("real/config.yaml"));
        std::os::unix::fs::symlink(base.join("loop"), base.join("loop")).unwrap();
        assert_eq!(real(&base.join("loop")), base.join("loop"));
    }
}
