//! Who is on the other end of a loopback connection, for Warden's local services (`warden
//! serve`, `warden mcp serve --http`).
//!
//! A loopback port is open to every user of the machine and to every web page the user's
//! browser shows. Warden's services act with the user's rights, so each of them asks:
//!
//! * [`same_user`]: does the client's socket belong to this user? The kernel names the owner
//!   of every socket (`sock_diag`, or `/proc/net/tcp` where that is unavailable); another
//!   local user's connection is closed unanswered.
//! * [`listener_at`]: before trusting what answers at a port, does the listening socket
//!   belong to this user? Another user may have bound the port first and answer as Warden
//!   would.
//! * [`check_local_request`]: is the request a web page's? A browser sends an `Origin` header
//!   with every cross-origin `POST` (even the "simple" `text/plain` ones it sends without
//!   asking), and a page on a name the attacker rebinds to 127.0.0.1 sends that name as
//!   `Host`: only the service's own address passes either.
//!
//! Linux only: other systems do not say who owns a socket, and the services refuse to start
//! there.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;

/// Why a listener cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// Another user's socket listens where this user's service should.
    #[error(
        "{addr} is held by a listening socket of user {uid}, not of this user ({me}): what answers there is not this user's Warden, so nothing is sent to it"
    )]
    OtherUsersListener {
        /// The address asked about.
        addr: SocketAddr,
        /// The listener's owner.
        uid: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// The kernel's socket table could not be read.
    #[error("cannot read {} to tell who listens at {addr}", path.display())]
    Unreadable {
        /// The table (`/proc/net/tcp` or `tcp6`).
        path: PathBuf,
        /// The address asked about.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Who listens at an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// No socket listens there.
    Nobody,
    /// Every socket that could take a connection to it belongs to this user.
    Mine,
}

/// This process's effective uid: the user a service acts for.
pub fn me() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// Whether the connection from `peer` to `local` comes from a socket this user owns: the
/// kernel is asked for the owner of the client's socket (sock_diag, one netlink round trip),
/// or where that is unavailable, `/proc/net/tcp` is searched (which walks every socket of the
/// machine, so it is the fallback). A connection nobody can name the owner of is not this
/// user's.
pub fn same_user(peer: SocketAddr, local: SocketAddr) -> bool {
    let me = me();
    match socket_owner(peer, local) {
        Some(uid) => uid == me,
        None => proc_owner(peer, local) == Some(me),
    }
}

/// Who listens at `addr`: every listening TCP socket that could accept a connection to it
/// (bound to its address, or to the wildcard address of either family on its port) must be
/// this user's, or the answer is [`PeerError::OtherUsersListener`]. What is read is the
/// kernel's table for this network namespace, the one a loopback connection stays in.
pub fn listener_at(addr: SocketAddr) -> Result<Listener, PeerError> {
    let me = me();
    let mut found = false;
    for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            // A kernel without IPv6 has no tcp6 table, and so no IPv6 listener.
            Err(e) if path.ends_with('6') && e.kind() == std::io::ErrorKind::NotFound => {
                continue;
            }
            Err(source) => {
                return Err(PeerError::Unreadable {
                    path: PathBuf::from(path),
                    addr,
                    source,
                });
            }
        };
        for uid in listeners_in(&text, addr) {
            if uid != me {
                return Err(PeerError::OtherUsersListener { addr, uid, me });
            }
            found = true;
        }
    }
    Ok(if found {
        Listener::Mine
    } else {
        Listener::Nobody
    })
}

/// The owners of the listening sockets in one `/proc/net/tcp{,6}` table that could take a
/// connection to `addr`.
fn listeners_in(table: &str, addr: SocketAddr) -> Vec<u32> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() <= 7 || f[3] != LISTEN {
                return None;
            }
            let (ip, port) = parse_proc_addr(f[1])?;
            (port == addr.port() && accepts_for(ip, addr.ip()))
                .then(|| f[7].parse::<u32>().ok())
                .flatten()
        })
        .collect()
}

/// Whether a socket listening on `bound` takes connections to `target` (same port): its own
/// address, the wildcard of either family (an IPv6 wildcard socket takes IPv4 connections
/// unless it is `IPV6_V6ONLY`, which the table does not show, so it counts), or the IPv4
/// address written as IPv6.
fn accepts_for(bound: IpAddr, target: IpAddr) -> bool {
    let wildcard = match bound {
        IpAddr::V4(v4) => v4 == Ipv4Addr::UNSPECIFIED && target.is_ipv4(),
        IpAddr::V6(v6) => v6 == Ipv6Addr::UNSPECIFIED,
    };
    wildcard
        || bound == target
        || matches!((bound, target), (IpAddr::V6(b), IpAddr::V4(t)) if b.to_ipv4_mapped() == Some(t))
}

/// Elsewhere no kernel is asked; `/proc/net/tcp` is missing too, so nobody is this user.
#[cfg(not(target_os = "linux"))]
fn socket_owner(_src: SocketAddr, _dst: SocketAddr) -> Option<u32> {
    None
}

/// The owner of the TCP socket whose local end is `src` and remote end is `dst`, from
/// `SOCK_DIAG_BY_FAMILY` (linux/inet_diag.h). `None` when the kernel cannot say.
#[cfg(target_os = "linux")]
fn socket_owner(src: SocketAddr, dst: SocketAddr) -> Option<u32> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    const NETLINK_SOCK_DIAG: libc::c_int = 4;
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLMSG_ERROR: u16 = 2;
    let (family, addr_words) = match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            let mut s16 = [0u8; 16];
            let mut d16 = [0u8; 16];
            s16[..4].copy_from_slice(&s.ip().octets());
            d16[..4].copy_from_slice(&d.ip().octets());
            (libc::AF_INET as u8, (s16, d16))
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            (libc::AF_INET6 as u8, (s.ip().octets(), d.ip().octets()))
        }
        _ => return None,
    };
    // struct nlmsghdr (16) + struct inet_diag_req_v2 (56).
    let mut req = Vec::with_capacity(72);
    req.extend_from_slice(&72u32.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes()); // seq
    req.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel
    req.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, 0, 0]);
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    req.extend_from_slice(&src.port().to_be_bytes());
    req.extend_from_slice(&dst.port().to_be_bytes());
    req.extend_from_slice(&addr_words.0);
    req.extend_from_slice(&addr_words.1);
    req.extend_from_slice(&0u32.to_ne_bytes()); // interface
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // no cookie
    req.extend_from_slice(&u32::MAX.to_ne_bytes());
    // SAFETY: plain socket(2); the descriptor is owned right away.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by socket(2) and belongs to nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: an all-zero sockaddr_nl is valid; family set below; pid 0 is the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: `req` and `kernel` are valid for the lengths given.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&raw const kernel).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent != req.len() as isize {
        return None;
    }
    let mut buf = [0u8; 1024];
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: setsockopt(2) reads `timeout` for its size.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&raw const timeout).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    // SAFETY: recv(2) writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    let n = usize::try_from(n).ok()?;
    // nlmsghdr, then struct inet_diag_msg: family, state, timer, retrans (4), the socket id
    // (48), expires, rqueue, wqueue (12), uid.
    let msg_type = u16::from_ne_bytes(buf.get(4..6)?.try_into().ok()?);
    if msg_type == NLMSG_ERROR || msg_type != SOCK_DIAG_BY_FAMILY || n < 16 + 68 {
        return None;
    }
    Some(u32::from_ne_bytes(buf.get(80..84)?.try_into().ok()?))
}

/// The owner of the socket from `src` to `dst`, from `/proc/net/tcp` (and `tcp6`): the
/// client's socket is the one whose local end is `src` and remote end is `dst`.
fn proc_owner(src: SocketAddr, dst: SocketAddr) -> Option<u32> {
    let table = if src.is_ipv4() {
        "/proc/net/tcp"
    } else {
        "/proc/net/tcp6"
    };
    let text = std::fs::read_to_string(table).ok()?;
    let (src, dst) = ((src.ip(), src.port()), (dst.ip(), dst.port()));
    text.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.len() > 7 && parse_proc_addr(f[1]) == Some(src) && parse_proc_addr(f[2]) == Some(dst))
            .then(|| f[7].parse::<u32>().ok())
            .flatten()
    })
}

/// An address as `/proc/net/tcp{,6}` prints it: the address in 32-bit words of host byte
/// order, in hex, a colon, then the port in hex.
fn parse_proc_addr(s: &str) -> Option<(IpAddr, u16)> {
    let (addr, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| {
        addr.get(i * 8..i * 8 + 8)
            .and_then(|w| u32::from_str_radix(w, 16).ok())
            .map(u32::to_ne_bytes)
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut o = [0u8; 16];
            for i in 0..4 {
                o[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(o))
        }
        _ => return None,
    };
    Some((ip, port))
}

/// Why a request is not served: it comes from a web page, or names another host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotLocal {
    /// No `Host` header, or more than one.
    #[error("the request must carry one Host header naming this service ({expected})")]
    Host {
        /// The accepted spellings.
        expected: String,
    },
    /// A `Host` that is not this service's address: a page on a name that resolves here.
    #[error(
        "Host `{host}` is not this service's address ({expected}); a page whose name resolves to this machine may not use it"
    )]
    ForeignHost {
        /// The header, as sent.
        host: String,
        /// The accepted spellings.
        expected: String,
    },
    /// An `Origin` other than the service's own: a web page of another site.
    #[error("Origin `{0}` is not this service's own; a web page may not use it")]
    CrossOrigin(String),
}

/// Whether a request to the service listening on `local` may be served, from its `Host` and
/// `Origin` headers (every value of each, as sent): exactly one `Host`, spelling `local`'s
/// address or `localhost` with its port; no `Origin`, or exactly one naming the same, over
/// `http`. Clients that are not browsers (Claude Code's `http` hooks, MCP clients) send no
/// `Origin`.
pub fn check_local_request(
    hosts: &[&[u8]],
    origins: &[&[u8]],
    local: SocketAddr,
) -> Result<(), NotLocal> {
    let own = own_authorities(local);
    let expected = own.join(" or ");
    let [host] = hosts else {
        return Err(NotLocal::Host { expected });
    };
    let host = String::from_utf8_lossy(host);
    if !own.iter().any(|a| a.eq_ignore_ascii_case(host.trim())) {
        return Err(NotLocal::ForeignHost {
            host: host.into_owned(),
            expected,
        });
    }
    match origins {
        [] => Ok(()),
        [origin] => {
            let text = String::from_utf8_lossy(origin);
            let ok = text
                .trim()
                .strip_prefix("http://")
                .is_some_and(|a| own.iter().any(|o| o.eq_ignore_ascii_case(a)));
            if ok {
                Ok(())
            } else {
                Err(NotLocal::CrossOrigin(text.into_owned()))
            }
        }
        _ => Err(NotLocal::CrossOrigin(
            origins
                .iter()
                .map(|o| String::from_utf8_lossy(o).into_owned())
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

/// The `host:port` spellings that name `local`: its address and `localhost`, with the port
/// (and without it, on port 80, as HTTP leaves the default port out).
fn own_authorities(local: SocketAddr) -> Vec<String> {
    let ip = match local.ip() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    let port = local.port();
    let mut out = vec![format!("{ip}:{port}"), format!("localhost:{port}")];
    if port == 80 {
        out.extend([ip, "localhost".to_string()]);
    }
    out
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_as_proc_spells_them() {
        let v4: SocketAddr = "127.0.0.1:47017".parse().expect("addr");
        assert_eq!(parse_proc_addr("0100007F:B7A9"), Some((v4.ip(), v4.port())));
        let v6: SocketAddr = "[::1]:80".parse().expect("addr");
        assert_eq!(
            parse_proc_addr("00000000000000000000000001000000:0050"),
            Some((v6.ip(), 80))
        );
        assert_eq!(parse_proc_addr("0100007F"), None);
        assert_eq!(parse_proc_addr("01007F:0050"), None);
        assert_eq!(parse_proc_addr("0100007G:0050"), None);
    }

    #[test]
    fn a_connection_from_this_user_is_recognised() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let local = l.local_addr().expect("addr");
        let c = std::net::TcpStream::connect(local).expect("connect");
        let (_s, peer) = l.accept().expect("accept");
        assert_eq!(peer, c.local_addr().expect("client addr"));
        assert!(same_user(peer, local));
        // Both ways of asking name the same owner.
        assert_eq!(socket_owner(peer, local), Some(me()));
        assert_eq!(proc_owner(peer, local), Some(me()));
        // A connection that does not exist belongs to nobody.
        let stranger = SocketAddr::new(peer.ip(), peer.port().wrapping_add(1).max(1));
        assert!(!same_user(stranger, local));
        assert_eq!(socket_owner(stranger, local), None);
    }

    #[test]
    fn this_users_listener_is_found_and_a_closed_port_has_none() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        assert_eq!(listener_at(addr).expect("table"), Listener::Mine);
        drop(l);
        assert_eq!(listener_at(addr).expect("table"), Listener::Nobody);
    }

    #[test]
    fn listeners_that_take_the_address_are_the_ones_counted() {
        // Header, then: 127.0.0.1:47017 (uid 1000), 0.0.0.0:47017 (uid 1001), 127.0.0.2:47017
        // (uid 1002), 127.0.0.1:47018 (uid 1003), an established 127.0.0.1:47017 (uid 1004).
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:B7A9 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1
   1: 00000000:B7A9 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 2
   2: 0200007F:B7A9 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1002        0 3
   3: 0100007F:B7AA 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1003        0 4
   4: 0100007F:B7A9 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1004        0 5
";
        let addr: SocketAddr = "127.0.0.1:47017".parse().expect("addr");
        assert_eq!(listeners_in(table, addr), vec![1000, 1001]);
        // IPv6: the wildcard and the mapped address take IPv4 connections; ::1 does not.
        let table6 = "  sl  local_address rem_address st tx rx tr retr uid timeout inode
   0: 00000000000000000000000000000000:B7A9 00000000000000000000000000000000:0000 0A 0:0 0:0 0 2000 0 1
   1: 0000000000000000FFFF00000100007F:B7A9 00000000000000000000000000000000:0000 0A 0:0 0:0 0 2001 0 2
   2: 00000000000000000000000001000000:B7A9 00000000000000000000000000000000:0000 0A 0:0 0:0 0 2002 0 3
";
        assert_eq!(listeners_in(table6, addr), vec![2000, 2001]);
        let v6: SocketAddr = "[::1]:47017".parse().expect("addr");
        assert_eq!(listeners_in(table6, v6), vec![2000, 2002]);
        // An IPv4 wildcard does not take IPv6 connections.
        assert_eq!(listeners_in(table, v6), Vec::<u32>::new());
    }

    #[test]
    fn only_the_services_own_host_and_origin_pass() {
        let check = |hosts: &[&str], origins: &[&str], local: &str| {
            let h: Vec<&[u8]> = hosts.iter().map(|s| s.as_bytes()).collect();
            let o: Vec<&[u8]> = origins.iter().map(|s| s.as_bytes()).collect();
            check_local_request(&h, &o, local.parse().expect("addr"))
        };
        let local = "127.0.0.1:47017";
        for (hosts, origins) in [
            (&["127.0.0.1:47017"][..], &[][..]),
            (&["LOCALHOST:47017"], &[]),
            (&["127.0.0.1:47017"], &["http://127.0.0.1:47017"]),
            (&["localhost:47017"], &["http://localhost:47017"]),
        ] {
            assert_eq!(
                check(hosts, origins, local),
                Ok(()),
                "{hosts:?} {origins:?}"
            );
        }
        for (hosts, origins) in [
            (&[][..], &[][..]),
            (&["127.0.0.1:47017", "127.0.0.1:47017"], &[]),
            (&["evil.example:47017"], &[]),
            (&["127.0.0.1"], &[]),
            (&["127.0.0.1:47018"], &[]),
            (&["127.0.0.1:47017"], &["https://evil.example"]),
            (&["127.0.0.1:47017"], &["null"]),
            (&["127.0.0.1:47017"], &["http://127.0.0.1:8080"]),
            (&["127.0.0.1:47017"], &["https://127.0.0.1:47017"]),
            (
                &["127.0.0.1:47017"],
                &["http://127.0.0.1:47017", "http://evil.example"],
            ),
        ] {
            assert!(
                check(hosts, origins, local).is_err(),
                "{hosts:?} {origins:?}"
            );
        }
        for host in ["[::1]:80", "[::1]", "localhost"] {
            assert_eq!(check(&[host], &[], "[::1]:80"), Ok(()), "{host}");
        }
        assert!(check(&["127.0.0.1:80"], &[], "[::1]:80").is_err());
    }
}
