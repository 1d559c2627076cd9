//! `memext pmem export|import`: a container's regions as one tar file, so they
//! can travel with its image (the paper copied region data on run/commit).
//! Export reads the regions through the store (no symlink is followed); import
//! accepts only plain files with valid region names and never overwrites.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{bail, Context};
use scm::protocol::valid_name;

use crate::pmem::store::RegionStore;

/// Writes every region of `key` to `out` as a tar archive; returns (regions, bytes).
pub fn export(store: &RegionStore, key: &str, out: &Path) -> anyhow::Result<(usize, u64)> {
    let regions = store.regions_of(key)?;
    if regions.is_empty() {
        bail!("no regions are filed under {key}");
    }
    let tmp = out.with_extension("partial");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut tar = tar::Builder::new(std::io::BufWriter::new(file));
    let mut bytes = 0;
    for (name, mut file) in regions {
        let len = file.metadata()?.len();
        let mut header = tar::Header::new_gnu();
        header.set_size(len);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        tar.append_data(&mut header, &name, &mut file)
            .with_context(|| format!("archiving region {name}"))?;
        bytes += len;
    }
    let count = tar.into_inner()?.into_inner().map_err(|e| e.into_error())?;
    count.sync_all()?;
    std::fs::rename(&tmp, out).with_context(|| format!("renaming to {}", out.display()))?;
    Ok((store.regions_of(key)?.len(), bytes))
}

/// Recreates the regions archived in `input` under `key`.
pub fn import(store: &RegionStore, key: &str, input: &Path) -> anyhow::Result<(usize, u64)> {
    let file =
        std::fs::File::open(input).with_context(|| format!("opening {}", input.display()))?;
    let mut archive = tar::Archive::new(std::io::BufReader::new(file));
    let (mut count, mut bytes) = (0, 0);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.to_string_lossy().into_owned();
        if entry.header().entry_type() != tar::EntryType::Regular || !valid_name(&name) {
            bail!(
                "{}: entry {name:?} is not a plain region file",
                input.display()
            );
        }
        let size = entry.header().size()?;
        let mut region = store.create_for_import(key, &name, size)?;
        let copied = copy_exact(&mut entry, &mut region, size)
            .with_context(|| format!("writing region {name}"))?;
        region.sync_all()?;
        count += 1;
        bytes += copied;
    }
    if count == 0 {
        bail!("{} holds no regions", input.display());
    }
    Ok((count, bytes))
}

fn copy_exact(from: &mut impl Read, to: &mut std::fs::File, size: u64) -> anyhow::Result<u64> {
    let copied = std::io::copy(&mut from.take(size), to)?;
    if copied != size {
        bail!("archive entry ended after {copied} of {size} bytes");
    }
    to.flush()?;
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scm::protocol::OpenRequest;
    use std::os::unix::fs::FileExt;

    #[test]
    fn regions_round_trip_through_an_archive_and_are_never_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = RegionStore::open(&dir.path().join("root"), 1 << 20, 4 << 20).expect("store");
        let (f, _) = store
            .open_region(
                "old",
                &OpenRequest {
                    name: "heap".into(),
                    size: 8192,
                    create: true,
                },
            )
            .expect("region");
        f.write_all_at(b"persistent", 4096).expect("write");
        let tar = dir.path().join("regions.tar");
        assert_eq!(export(&store, "old", &tar).expect("export").0, 1);
        assert_eq!(import(&store, "new", &tar).expect("import"), (1, 8192));
        let (g, size) = store
            .open_region(
                "new",
                &OpenRequest {
                    name: "heap".into(),
                    size: 0,
                    create: false,
                },
            )
            .expect("imported");
        let mut buf = [0u8; 10];
        g.read_exact_at(&mut buf, 4096).expect("read");
        assert_eq!((&buf, size), (b"persistent", 8192));
        assert!(
            import(&store, "new", &tar).is_err(),
            "import never replaces a region"
        );
        assert!(export(&store, "nobody", &tar).is_err(), "nothing to export");
    }
}
