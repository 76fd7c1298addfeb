use super::*;

/// An echo server on a free port.
fn echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let mut s = s.unwrap();
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Sends `msg` and times its echo; `None` when nothing came back within `wait`.
fn round_trip(s: &mut TcpStream, msg: &[u8], wait: Duration) -> Option<Duration> {
    s.set_read_timeout(Some(wait)).unwrap();
    let started = Instant::now();
    s.write_all(msg).unwrap();
    let mut got = vec![0u8; msg.len()];
    s.read_exact(&mut got).ok()?;
    assert_eq!(got, msg);
    Some(started.elapsed())
}

#[test]
fn carries_holds_heals_and_delays() {
    let proxy = Proxy::start(echo()).unwrap();
    let mut s = TcpStream::connect(proxy.addr()).unwrap();
    let fast = round_trip(&mut s, b"hello", Duration::from_secs(5)).expect("open");
    assert!(fast < Duration::from_millis(500), "{fast:?}");

    proxy.cut();
    let mut held = TcpStream::connect(proxy.addr()).expect("accepted while cut");
    assert_eq!(
        round_trip(&mut s, b"lost?", Duration::from_millis(500)),
        None
    );
    assert_eq!(
        round_trip(&mut held, b"new", Duration::from_millis(300)),
        None
    );
    proxy.heal();
    // What was held arrives after the heal, in order, on both connections.
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = [0u8; 5];
    s.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"lost?");
    let mut got = [0u8; 3];
    held.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    held.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"new");

    proxy.delay(Duration::from_millis(300));
    let slow = round_trip(&mut s, b"slow", Duration::from_secs(5)).expect("delayed");
    assert!(slow >= Duration::from_millis(600), "{slow:?}");
    proxy.heal();
    let fast = round_trip(&mut s, b"fast", Duration::from_secs(5)).expect("open again");
    assert!(fast < Duration::from_millis(300), "{fast:?}");
}

#[test]
fn rewrites_a_kubeconfig_to_go_through_it() {
    let target = echo();
    let proxy = Proxy::start(target).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(
        &from,
        format!("server: https://127.0.0.1:{}\n", target.port()),
    )
    .unwrap();
    proxy.rewrite_kubeconfig(&from, &to).unwrap();
    assert_eq!(
        std::fs::read_to_string(&to).unwrap(),
        format!("server: https://{}\n", proxy.addr())
    );
    std::fs::write(&from, "server: https://127.0.0.1:1\n").unwrap();
    assert!(proxy.rewrite_kubeconfig(&from, &to).is_err());
}
