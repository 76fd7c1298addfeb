use std::os::unix::fs::PermissionsExt;

use super::*;

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_data_directory_and_its_secrets_are_private() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("parent").join("data");
    private_dir(&dir).unwrap();
    assert_eq!(mode(&dir), 0o700, "created private");

    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["ca.key", "admin.kubeconfig", "ca.crt"] {
        fs::write(dir.join(name), "x").unwrap();
        fs::set_permissions(dir.join(name), fs::Permissions::from_mode(0o644)).unwrap();
    }
    private_dir(&dir).unwrap();
    private_files(&dir);
    assert_eq!(mode(&dir), 0o700, "tightened");
    assert_eq!(mode(&dir.join("ca.key")), 0o600);
    assert_eq!(mode(&dir.join("admin.kubeconfig")), 0o600);
    assert_eq!(
        mode(&dir.join("ca.crt")),
        0o644,
        "the CA certificate is public"
    );
}
