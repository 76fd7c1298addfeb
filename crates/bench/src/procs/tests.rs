use super::*;

#[test]
fn reads_rss_and_peak() {
    let text = "Name:\tflotilla\nVmPeak:\t  900000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n";
    assert_eq!(
        parse_rss(text),
        Some(Rss {
            now: 40 * 1024 * 1024,
            peak: 50 * 1024 * 1024
        })
    );
    assert_eq!(parse_rss("Name:\tx\nVmRSS:\t 1 kB\n"), None);
}

#[test]
fn reads_this_process() {
    let r = rss(std::process::id()).unwrap();
    assert!(r.now > 0 && r.peak >= r.now, "{r:?}");
}
