//! Declares the `loom` cfg so that `--cfg loom` builds (scripts/loom.sh) are not warned about.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
