//! Writes the seed corpora: `cargo +nightly run --example write_seeds` in `fuzz/` replaces
//! `corpus/<target>/seed-*` with [`shmem_fuzz::seeds::all`] (inputs found by fuzzing, and
//! crash inputs kept as regressions, are left alone).

use std::path::Path;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let seeds = shmem_fuzz::seeds::all();
    for (target, _, _) in &seeds {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir)?;
        for e in std::fs::read_dir(&dir)? {
            let p = e?.path();
            if p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
            {
                std::fs::remove_file(p)?;
            }
        }
    }
    for (target, name, bytes) in &seeds {
        std::fs::write(root.join(target).join(format!("seed-{name}")), bytes)?;
    }
    println!("{} seeds written under {}", seeds.len(), root.display());
    Ok(())
}
