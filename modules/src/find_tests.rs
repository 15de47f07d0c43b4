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

fn symbol(name: &str) -> AltName {
    AltName::Symbol(name.to_string())
}

fn alias(name: &str) -> AltName {
    AltName::Alias(name.to_string())
}

fn auto(name: &str) -> AltName {
    AltName::Auto(name.to_string())
}

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
    assert_eq!(alt_names(&paths, &gcc), [symbol("gcc/default"), symbol("gcc")]);
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
    assert_eq!((sam.name.as_str(), sam.alt_names.as_slice()), ("bio/samtools/1.17", &[alias("sam")][..]));
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

/// The other names of a module as Environment Modules 5.2 records them in
/// `__MODULES_LMALTNAME`, whatever name it was loaded by (recorded from 5.2.0 on the same tree).
#[test]
fn other_names_are_symbols_then_aliases_then_automatic_symbols() {
    let a = tree(&[
        ("zz/1.0", M),
        ("zz/2.0", M),
        ("zz/3.0", M),
        ("zz/.modulerc", "#%Module\nmodule-version zz/2.0 testing edge default\nmodule-version zz/3.0 latest\n"),
        ("py/3.9", M),
        ("py/3.11", M),
        ("py/.version", "#%Module\nset ModulesVersion 3.9\n"),
        ("bio/samtools/1.9", M),
        ("bio/samtools/1.17", M),
        ("gcc/9.1", M),
        ("gcc/11.4", M),
        (
            ".modulerc",
            "#%Module\nmodule-alias sam bio/samtools\nmodule-alias py3 py/3.11\nmodule-alias zed zz\nmodule-alias oth other/1.0\n",
        ),
    ]);
    let b = tree(&[
        ("other/1.0", M),
        ("tool/1.0", M),
        (".modulerc", "#%Module\nmodule-alias tl tool/1.0\nmodule-alias gnu gcc/9.1\n"),
    ]);
    let ab = vec![a.path().to_path_buf(), b.path().to_path_buf()];
    let names = |designation: &str| alt_names(&ab, &resolve(&ab, designation).unwrap());
    let zz = [symbol("zz/testing"), symbol("zz/edge"), symbol("zz/default"), symbol("zz"), alias("zed")];
    assert_eq!(names("zz"), zz, "symbols as declared, the bare name of the default, then aliases");
    assert_eq!(names("zed"), zz, "the same by its alias");
    assert_eq!(names("zz/3.0"), [symbol("zz/latest")], "an explicit latest: no automatic one");
    assert_eq!(names("zz/1.0"), []);
    assert_eq!(names("py"), [symbol("py/default"), symbol("py")], ".version's default");
    assert_eq!(names("py/3.11"), [alias("py3"), auto("py/latest")], "loaded by its full name, its alias still counts");
    let samtools_dir = [auto("bio/default"), auto("bio/latest")];
    let sam =
        [&[alias("sam")][..], &samtools_dir, &[auto("bio/samtools/default"), auto("bio/samtools/latest")]].concat();
    assert_eq!(names("sam"), sam);
    assert_eq!(names("bio/samtools/1.9"), [&[alias("sam")][..], &samtools_dir].concat(), "an alias of its directory");
    assert_eq!(names("gcc"), [auto("gcc/default"), auto("gcc/latest")]);
    assert_eq!(names("gcc/9.1"), [], "an alias of a later modulepath does not count");
    assert_eq!(
        names("other"),
        [alias("oth"), auto("other/default"), auto("other/latest")],
        "one of an earlier one does"
    );
    assert_eq!(names("tl"), [alias("tl"), auto("tool/default"), auto("tool/latest")], "the alias it was reached by");
}

/// A `.modulerc` may declare a hundred thousand aliases of one module: they cost a walk each,
/// and at most `MAX_ALT_NAMES` of them are kept (one environment string over 128 KiB would
/// make every program the user's shell starts fail).
#[test]
fn thousands_of_aliases_of_one_module_keep_a_bounded_list() {
    let mut rc = String::from("#%Module\n");
    for index in 0..20_000 {
        rc.push_str(&format!("module-alias a{index} x/1\nmodule-version x/1 s{index}\n"));
    }
    let a = tree(&[("x/1", M), (".modulerc", &rc)]);
    let paths = vec![a.path().to_path_buf()];
    let started = std::time::Instant::now();
    let names = alt_names(&paths, &resolve(&paths, "a7").unwrap());
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(names.len(), MAX_ALT_NAMES + 1 + 2, "the symbols kept, the alias used, x/default and x/latest");
    assert_eq!(names[0], symbol("x/s0"));
    assert!(names.contains(&alias("a7")) && names.contains(&auto("x/latest")));
}
