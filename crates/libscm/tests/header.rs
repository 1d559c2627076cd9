//! The committed C header must be what cbindgen generates from the current ABI.

use std::path::PathBuf;

#[test]
fn committed_header_matches_the_abi() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let path = crate_dir.join("include/libscm.h");
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/libscm.h");
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/libscm.h is stale: run `UPDATE_HEADER=1 cargo test -p libscm --test header` and commit it"
    );
}
