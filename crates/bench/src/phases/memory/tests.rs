use super::*;

#[test]
fn reads_vm_rss() {
    let status = "Name:\tflotilla\nVmPeak:\t  900000 kB\nVmRSS:\t  413696 kB\nRssAnon:\t  1 kB\n";
    assert_eq!(vm_rss(status), Some(413_696 * 1024));
    assert_eq!(vm_rss("Name: x\n"), None);
}

#[test]
fn reads_this_process() {
    let me = resident(&[std::process::id()]).unwrap();
    assert!(me > 1_000_000, "{me}");
    assert!(resident(&[]).is_err());
}
