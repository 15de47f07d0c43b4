//! Rebuild when a migration directory is added (embed_migrations! only tracks existing files).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
