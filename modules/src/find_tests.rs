//! Name resolution and listing on small trees written per test.

use super::*;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

const M: &str = "#%Module\n";

fn name_of(paths: &[PathBuf], designation: &str) -> Option<String> {
    resolve(paths, designation).map(|found| found.name)
}

#[test]
fn bare_names_pick_the_explicit_default_else_the_highest_in_dictionary_order() {
    let a = tree(&[
        ("zlib/1.9", M),
        ("zlib/1.17", M),
        ("zlib/1.2", M),
        ("gcc/9.1", M),
        ("gcc/11.4", M),
        ("gcc/.modulerc", "#%Module\nmodule-version gcc/9.1 default\nmodule-version gcc/11.4 new\n"),
        ("py/3.9", M),
        ("py/3.11", M),
        ("py/.version", "#%Module\nset ModulesVersion 3.9\n"),
        ("tool/README", "not a module\n"),
        ("tool/1.0", M),
        ("tool/2.0", "plain text\n"),
    ]);
    let paths = vec![a.path().to_path_buf()];
    assert_eq!(name_of(&paths, "zlib").as_deref(), Some("zlib/1.17"), "1.9 < 1.17");
    assert_eq!(name_of(&paths, "gcc").as_deref(), Some("gcc/9.1"));
    assert_eq!(name_of(&paths, "gcc/new").as_deref(), Some("gcc/11.4"));
    assert_eq!(name_of(&paths, "py").as_deref(), Some("py/3.9"));
    assert_eq!(name_of(&paths, "tool").as_deref(), Some("tool/1.0"), "files without the cookie are not candidates");
    assert_eq!(name_of(&paths, "tool/2.0").as_deref(), Some("tool/2.0"), "but an explicit name finds them");
    assert_eq!(name_of(&paths, "zlib/1").as_deref(), Some("zlib/1.17"), "a partial version");
    assert_eq!(name_of(&paths, "zlib/99"), None);
    assert_eq!(name_of(&paths, "ZLIB"), None, "case matters");
    assert_eq!(name_of(&paths, "../etc/passwd"), None);
    let gcc = resolve(&paths, "gcc").unwrap();
    assert_eq!(gcc.alt_names, ["gcc", "gcc/default"]);
    assert_eq!(gcc.file, a.path().join("gcc/9.1"));
}

#[test]
fn the_first_modulepath_with_the_name_wins_and_aliases_are_followed() {
    let a = tree(&[("foo/2.0", M), (".modulerc", "#%Module\nmodule-alias sam bio/samtools/1.17\n")]);
    let b = tree(&[("foo/1.0", M), ("foo/1.5", M), ("bio/samtools/1.17", M), ("bio/samtools/1.9", M)]);
    let ab = vec![a.path().to_path_buf(), b.path().to_path_buf()];
    let ba = vec![b.path().to_path_buf(), a.path().to_path_buf()];
    assert_eq!(name_of(&ab, "foo").as_deref(), Some("foo/2.0"));
    assert_eq!(name_of(&ba, "foo").as_deref(), Some("foo/1.5"));
    let sam = resolve(&ab, "sam").unwrap();
    assert_eq!((sam.name.as_str(), sam.alt_names.as_slice()), ("bio/samtools/1.17", &["sam".to_string()][..]));
    assert_eq!(name_of(&ab, "bio/samtools").as_deref(), Some("bio/samtools/1.17"));
    assert_eq!(name_of(&ab, "bio").as_deref(), Some("bio/samtools/1.17"), "a directory default is searched in turn");
}

#[test]
fn listings_show_modules_symbols_aliases_and_hidden_ones() {
    let a = tree(&[
        ("zlib/1.2.13", M),
        ("zlib/1.3.1", M),
        ("zlib/.modulerc", "#%Module\nmodule-version zlib/1.2.13 default\nmodule-version zlib/1.3.1 testing edge\n"),
        ("zlib/.hidden/1.0", M),
        (".modulerc", "#%Module\nmodule-alias sam bio/samtools/1.17\n"),
        ("notes/readme", "text\n"),
        (".git/config/x", M),
    ]);
    let listing = list(a.path());
    assert_eq!(
        listing.modules,
        [("zlib/.hidden/1.0".to_string(), true), ("zlib/1.2.13".to_string(), false), ("zlib/1.3.1".to_string(), false)]
    );
    assert_eq!(listing.symbols["zlib/1.3.1"], ["edge", "testing"]);
    assert_eq!(listing.symbols["zlib/1.2.13"], ["default"]);
    assert_eq!(listing.aliases["sam"], "bio/samtools/1.17");
}
