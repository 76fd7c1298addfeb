use super::*;

fn sh(script: &str, log: &Path) -> Proc {
    let args = [OsStr::new("-c"), OsStr::new(script)];
    Proc::start("shell", Path::new("/bin/sh"), &args, "warn", log).unwrap()
}

#[test]
fn a_live_process_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = sh("exec sleep 30", &dir.path().join("log"));
    assert!(p.check_alive().is_ok());
    let started = Instant::now();
    p.stop().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let e = p.check_alive().unwrap_err();
    assert!(format!("{e:#}").contains("the shell exited"), "{e:#}");
}

#[test]
fn an_exited_process_is_reported_with_its_log_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut p = sh(
        "echo \"level=$RUST_LOG store=${FLOTILLA_STORE:-none}\"; exit 3",
        &log,
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.check_alive().is_ok() {
        assert!(Instant::now() < deadline, "sh did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    let e = format!("{:#}", p.check_alive().unwrap_err());
    assert!(e.contains("exit status: 3"), "{e}");
    assert!(e.contains("level=warn store=none"), "{e}");
    assert_eq!(p.log_path(), log);
    p.stop().unwrap();
}

#[test]
fn kill_ends_it_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = sh("trap '' TERM; exec sleep 30", &dir.path().join("log"));
    p.kill().unwrap();
    assert!(p.check_alive().is_err());
}
