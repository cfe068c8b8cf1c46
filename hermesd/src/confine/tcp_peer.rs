//! Which process is at the other end of a loopback TCP connection, for the API server: the
//! client's socket is found in `/proc/net/tcp{,6}` by its two addresses, and its inode among
//! the descriptors of this user's processes. The API server then asks the confinement whether
//! that process carries the agent's mark, as the control socket does with `SO_PEERCRED`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

/// `addr` as `/proc/net/tcp{,6}` prints it (`0100007F:1F90`).
fn proc_form(addr: SocketAddr) -> String {
    let port = addr.port();
    match addr.ip() {
        IpAddr::V4(ip) => format!("{:08X}:{port:04X}", u32::from_ne_bytes(ip.octets())),
        IpAddr::V6(ip) => {
            let octets = ip.octets();
            let words: String = octets
                .chunks(4)
                .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
                .collect();
            format!("{words}:{port:04X}")
        }
    }
}

/// The same address as an IPv4-mapped IPv6 one (a dual-stack listener sees those).
fn mapped(addr: SocketAddr) -> Option<SocketAddr> {
    match addr.ip() {
        IpAddr::V4(ip) => Some(SocketAddr::new(
            IpAddr::V6(ip.to_ipv6_mapped()),
            addr.port(),
        )),
        IpAddr::V6(ip) => ip
            .to_ipv4_mapped()
            .map(|v4: Ipv4Addr| SocketAddr::new(IpAddr::V4(v4), addr.port())),
    }
}

/// The inode of the client's socket of the connection `client → server`.
fn client_inode(client: SocketAddr, server: SocketAddr) -> Option<u64> {
    let pairs = [Some((client, server)), mapped(client).zip(mapped(server))];
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for (c, s) in pairs.iter().flatten() {
            let (local, remote) = (proc_form(*c), proc_form(*s));
            let found = text.lines().skip(1).find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                (fields.get(1) == Some(&local.as_str()) && fields.get(2) == Some(&remote.as_str()))
                    .then(|| fields.get(9).and_then(|i| i.parse().ok()))
                    .flatten()
            });
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

/// The pid of a process holding the socket `inode`.
fn holder_of(inode: u64) -> Option<i32> {
    let wanted = format!("socket:[{inode}]");
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().find_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == Path::new(&wanted)))
            .then_some(pid)
    })
}

/// Whether the loopback client `client` of the listener at `server` is one of the agent's
/// processes. Blocking (reads `/proc`): call off the runtime. A client that cannot be found
/// (gone already, or another user's) is not the agent's: the key check still applies to it.
pub fn loopback_client_is_agent(client: SocketAddr, server: SocketAddr) -> bool {
    if !client.ip().is_loopback() && !mapped(client).is_some_and(|m| m.ip().is_loopback()) {
        return false;
    }
    let Some(confinement) = super::current() else {
        return false;
    };
    let Some(inode) = client_inode(client, server) else {
        return false;
    };
    if let Some(known) = KNOWN.lock().ok().and_then(|k| k.get(&inode).copied()) {
        return known;
    }
    let Some(pid) = holder_of(inode) else {
        return false;
    };
    let agent = confinement.is_agent(pid);
    if let Ok(mut known) = KNOWN.lock() {
        if known.len() >= KNOWN_BOUND {
            known.clear();
        }
        known.insert(inode, agent);
    }
    agent
}

/// Connections already judged, by the inode of the client's socket (the holder scan reads every
/// process's descriptors; a connection's requests after the first read one line of
/// `/proc/net/tcp`). Socket inodes come from a counter, so a number is not given to another
/// socket while it is remembered. At most [`KNOWN_BOUND`], then forgotten at once.
static KNOWN: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<u64, bool>>> =
    std::sync::LazyLock::new(Default::default);
const KNOWN_BOUND: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    #[test]
    fn addresses_read_as_the_kernel_prints_them() {
        let v4: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(proc_form(v4), "0100007F:1F90");
        let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 80);
        assert_eq!(proc_form(v6), "00000000000000000000000001000000:0050");
    }

    #[test]
    fn a_connection_of_this_process_is_found_with_its_holder() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let inode = client_inode(client.local_addr().unwrap(), server).expect("in /proc/net/tcp");
        assert_eq!(holder_of(inode), Some(std::process::id() as i32));
    }
}
