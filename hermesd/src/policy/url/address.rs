//! What kind of network address an IP is: public, private (loopback, private and unique-local
//! ranges, the unspecified address, shared and reserved space) or forbidden (link-local, which
//! holds the cloud metadata services, and the metadata addresses outside it). Embedded IPv4
//! (IPv4-mapped, NAT64, 6to4) is judged as the IPv4 address it carries.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// How an address is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// Anywhere on the internet.
    Public,
    /// Inside a host or a network (what it is); fetched only with `security.allow_private_urls`.
    Private(&'static str),
    /// Never fetched, whatever the configuration says (what it is).
    Forbidden(&'static str),
}

/// The class of `ip`.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    use AddressClass::{Forbidden, Private, Public};
    if in_v4(ip, [169, 254, 0, 0], 16) {
        return Forbidden("a link-local address (cloud metadata services live there)");
    }
    if ip == Ipv4Addr::new(100, 100, 100, 200) {
        return Forbidden("a cloud metadata address");
    }
    const PRIVATE: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "an unspecified (this-host) address"),
        ([127, 0, 0, 0], 8, "a loopback address"),
        ([10, 0, 0, 0], 8, "a private address"),
        ([172, 16, 0, 0], 12, "a private address"),
        ([192, 168, 0, 0], 16, "a private address"),
        ([100, 64, 0, 0], 10, "a shared (carrier-grade NAT) address"),
        ([192, 0, 0, 0], 24, "a reserved address"),
        ([192, 0, 2, 0], 24, "a documentation address"),
        ([198, 51, 100, 0], 24, "a documentation address"),
        ([203, 0, 113, 0], 24, "a documentation address"),
        ([198, 18, 0, 0], 15, "a benchmarking address"),
        ([224, 0, 0, 0], 4, "a multicast address"),
        ([240, 0, 0, 0], 4, "a reserved address"),
    ];
    PRIVATE
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map_or(Public, |(_, _, what)| Private(what))
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    use AddressClass::{Forbidden, Private, Public};
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach the IPv4 address they carry.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return classify_v4(embedded(s[1], s[2]));
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Forbidden("a cloud metadata address");
    }
    if s[0] & 0xffc0 == 0xfe80 {
        return Forbidden("a link-local address (cloud metadata services live there)");
    }
    if ip.is_unspecified() {
        return Private("an unspecified (this-host) address");
    }
    if ip.is_loopback() {
        return Private("a loopback address");
    }
    if s[0] & 0xfe00 == 0xfc00 {
        return Private("a unique-local (private) address");
    }
    if s[0] & 0xffc0 == 0xfec0 {
        return Private("a site-local (private) address");
    }
    if s[0] & 0xff00 == 0xff00 {
        return Private("a multicast address");
    }
    // The rest of ::/8 (IPv4-compatible and reserved), discard-only, documentation, and the
    // IETF protocol assignments (Teredo among them, which hides an IPv4 address).
    if s[0] & 0xff00 == 0 || s[..4] == [0x100, 0, 0, 0] {
        return Private("a reserved address");
    }
    if s[0] == 0x2001 && (s[1] == 0xdb8 || s[1] < 0x200) {
        return Private("a reserved address");
    }
    Public
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> AddressClass {
        classify(text.parse().unwrap())
    }

    #[test]
    fn ranges_are_classified_as_hermes_classifies_them() {
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700::1111",
            "100.128.0.1",
            "172.32.0.1",
        ] {
            assert_eq!(class(public), AddressClass::Public, "{public}");
        }
        for private in [
            "127.0.0.1",
            "127.255.1.2",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "::ffff:127.0.0.1",
            "::ffff:7f00:1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2001:db8::1",
            "2001::1",
            "ff02::1",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
        ] {
            assert!(
                matches!(class(private), AddressClass::Private(_)),
                "{private}: {:?}",
                class(private)
            );
        }
        for forbidden in [
            "169.254.169.254",
            "169.254.170.2",
            "169.254.0.1",
            "100.100.100.200",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:169.254.169.254",
            "::ffff:a9fe:a9fe",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            assert!(
                matches!(class(forbidden), AddressClass::Forbidden(_)),
                "{forbidden}: {:?}",
                class(forbidden)
            );
        }
    }
}
