//! The host of a URL as a connection would reach it: an IP literal in any form a resolver or
//! browser accepts (`[::1]`, `2130706433`, `0x7f.1`, `0177.0.0.1`) is read as that address, so a
//! numeric disguise is never handed to DNS; anything else is a name, lower-cased, without its
//! trailing dot.

use std::net::{IpAddr, Ipv4Addr};

/// A URL's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    Name(String),
}

/// Read `host` (as `http::Uri::host` gives it: IPv6 in brackets). `Err` says why it is no host.
pub fn parse_host(host: &str) -> Result<Host, String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err("the URL has no host".into());
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        // A zone (`%eth0`) names an interface: link-local, never a fetch target.
        let inner = inner.split('%').next().unwrap_or_default();
        return inner
            .parse()
            .map(|ip: std::net::Ipv6Addr| Host::Ip(IpAddr::V6(ip)))
            .map_err(|_| format!("{host:?} is not an IPv6 address"));
    }
    match numeric_ipv4(&host) {
        Some(Ok(ip)) => Ok(Host::Ip(IpAddr::V4(ip))),
        Some(Err(())) => Err(format!("{host:?} is neither an IPv4 address nor a name")),
        None => Ok(Host::Name(host)),
    }
}

/// One part of a numeric IPv4 host: `0x` hex, a leading `0` octal, else decimal.
fn part(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x") {
        return if hex.is_empty() {
            Some(0)
        } else {
            u64::from_str_radix(hex, 16).ok()
        };
    }
    if text.len() > 1
        && let Some(octal) = text.strip_prefix('0')
    {
        return u64::from_str_radix(octal, 8).ok();
    }
    text.parse().ok()
}

/// A host whose last label is a number is an IPv4 address in inet_aton's forms (one to four
/// parts, the last filling the remaining bytes), or no valid host at all; `None` for a name.
fn numeric_ipv4(host: &str) -> Option<Result<Ipv4Addr, ()>> {
    let last = host.rsplit('.').next().unwrap_or_default();
    let numeric = !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || last
                .strip_prefix("0x")
                .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())));
    if !numeric {
        return None;
    }
    let parts: Vec<&str> = host.split('.').collect();
    if parts.len() > 4 {
        return Some(Err(()));
    }
    let mut values = Vec::with_capacity(parts.len());
    for p in &parts {
        match part(p) {
            Some(v) => values.push(v),
            None => return Some(Err(())),
        }
    }
    let (last, leading) = values.split_last()?;
    if leading.iter().any(|v| *v > 255) {
        return Some(Err(()));
    }
    let last_bits = 8 * (5 - values.len() as u32);
    if *last >= 1u64 << last_bits {
        return Some(Err(()));
    }
    let mut value = *last;
    for (i, v) in leading.iter().enumerate() {
        value |= v << (24 - 8 * i as u32);
    }
    Some(u32::try_from(value).map(Ipv4Addr::from).map_err(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(host: &str) -> IpAddr {
        match parse_host(host).unwrap() {
            Host::Ip(ip) => ip,
            Host::Name(n) => panic!("{host} read as the name {n}"),
        }
    }

    #[test]
    fn numeric_disguises_of_an_address_are_that_address() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        for form in [
            "127.0.0.1",
            "2130706433",
            "0x7f000001",
            "0X7F000001",
            "0177.0.0.1",
            "0x7f.0.0.1",
            "127.1",
            "127.0.1",
            "0x7f.1",
            "127.0.0.1.",
            "017700000001",
        ] {
            assert_eq!(ip(form), loopback, "{form}");
        }
        assert_eq!(ip("0"), "0.0.0.0".parse::<IpAddr>().unwrap());
        assert_eq!(ip("[::]"), "::".parse::<IpAddr>().unwrap());
        assert_eq!(
            ip("[::ffff:127.0.0.1]"),
            "::ffff:7f00:1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(ip("[fe80::1%25eth0]"), "fe80::1".parse::<IpAddr>().unwrap());
        assert_eq!(
            ip("2852039166"),
            "169.254.169.254".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn names_stay_names_and_broken_numbers_are_refused() {
        assert_eq!(
            parse_host("Example.COM.").unwrap(),
            Host::Name("example.com".into())
        );
        assert_eq!(
            parse_host("1.2.3.example").unwrap(),
            Host::Name("1.2.3.example".into())
        );
        for bad in [
            "256.0.0.1",
            "1.2.3.4.5",
            "08.0.0.1",
            "1.2.3.256",
            "[::g]",
            "4294967296",
            "",
        ] {
            assert!(parse_host(bad).is_err(), "{bad}");
        }
    }
}
