//! The loaded modules, kept only in environment variables so child shells and job scripts
//! inherit them (modules.md section 7): `LOADEDMODULES` and `_LMFILES_` (public), and the
//! bookkeeping that unload and dependency handling need without re-reading other modulefiles:
//! `__MODULES_LMPREREQ` (`mod&a|b&c`), `__MODULES_LMCONFLICT` (`mod&x&y`), `__MODULES_LMTAG`
//! (`mod&auto-loaded`) and `__MODULES_LMALTNAME` (`mod&zlib/default&zlib&al|z&as|zlib/latest`:
//! symbols and bare names as they are, aliases after `al|`, automatic symbols after `as|`, as
//! 5.2 writes them), entries joined by `:`.
//!
//! Owns: reading and writing those variables, and matching a designation against loaded
//! modules. Pure.

use crate::env::Env;

/// One loaded module.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Loaded {
    /// `name/version`.
    pub name: String,
    /// The modulefile.
    pub file: String,
    /// Loaded as a requirement of another module (tag `auto-loaded`, shown `<aL>`).
    pub auto: bool,
    /// Requirements: each group is satisfied by any one of its designations.
    pub prereqs: Vec<Vec<String>>,
    /// Designations it conflicts with.
    pub conflicts: Vec<String>,
    /// Other names it answers to (`find::alt_names`).
    pub alt_names: Vec<AltName>,
}

/// Another name a loaded module answers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AltName {
    /// A symbolic version (`zlib/default`), or the bare name of an explicit default (`zlib`).
    Symbol(String),
    /// A `module-alias` that leads to it (`mpi`), kept as `al|mpi`.
    Alias(String),
    /// An automatic symbol: the `default` or `latest` of a directory that declares none, when
    /// it is the directory's highest entry (`gcc/latest`), kept as `as|gcc/latest`.
    Auto(String),
}

impl AltName {
    /// The name itself.
    pub fn name(&self) -> &str {
        match self {
            AltName::Symbol(name) | AltName::Alias(name) | AltName::Auto(name) => name,
        }
    }

    /// A field of `__MODULES_LMALTNAME` (a field without a prefix, as older releases wrote
    /// them all, is a symbol).
    pub fn parse(field: &str) -> AltName {
        if let Some(name) = field.strip_prefix("al|") {
            AltName::Alias(name.to_string())
        } else if let Some(name) = field.strip_prefix("as|") {
            AltName::Auto(name.to_string())
        } else {
            AltName::Symbol(field.to_string())
        }
    }

    /// The field written for it.
    pub fn field(&self) -> String {
        match self {
            AltName::Symbol(name) => name.clone(),
            AltName::Alias(name) => format!("al|{name}"),
            AltName::Auto(name) => format!("as|{name}"),
        }
    }
}

impl Loaded {
    /// Whether `designation` names this module: its full name, a bare name of which it is a
    /// version (`gcc` matches `gcc/11.4`, `bio/samtools` matches `bio/samtools/1.17`), or one
    /// of its other names.
    pub fn matches(&self, designation: &str) -> bool {
        name_matches(&self.name, designation)
            || self.alt_names.iter().any(|alt| alt.name() == designation.trim_end_matches('/'))
    }
}

/// Whether module `name` answers to `designation` by name: the same full name, a bare name
/// of which it is a version (`gcc` for `gcc/11.4`), or a partial version (5.2's
/// `extended_default`: `zlib/1` for `zlib/1.3.1`).
pub fn name_matches(name: &str, designation: &str) -> bool {
    let designation = designation.trim_end_matches('/');
    name == designation
        || name
            .strip_prefix(designation)
            .is_some_and(|rest| rest.starts_with('/') || (rest.starts_with('.') && designation.contains('/')))
}

/// The loaded modules in load order, read from `env`.
pub fn read(env: &Env) -> Vec<Loaded> {
    let names = list(env, "LOADEDMODULES");
    let files = list(env, "_LMFILES_");
    let prereqs = records(env, "__MODULES_LMPREREQ");
    let conflicts = records(env, "__MODULES_LMCONFLICT");
    let tags = records(env, "__MODULES_LMTAG");
    let alt_names = records(env, "__MODULES_LMALTNAME");
    names
        .iter()
        .enumerate()
        .map(|(index, name)| Loaded {
            name: name.clone(),
            file: files.get(index).cloned().unwrap_or_default(),
            auto: find(&tags, name).iter().any(|tag| tag == "auto-loaded"),
            prereqs: find(&prereqs, name)
                .into_iter()
                .map(|group| group.split('|').map(str::to_string).collect())
                .collect(),
            conflicts: find(&conflicts, name),
            alt_names: find(&alt_names, name).iter().map(|field| AltName::parse(field)).collect(),
        })
        .collect()
}

/// Writes `loaded` back into `env` (unsetting what becomes empty).
pub fn write(env: &mut Env, loaded: &[Loaded]) {
    let names: Vec<&str> = loaded.iter().map(|module| module.name.as_str()).collect();
    let files: Vec<&str> = loaded.iter().map(|module| module.file.as_str()).collect();
    store(env, "LOADEDMODULES", names.join(":"));
    store(env, "_LMFILES_", files.join(":"));
    let record = |fields: &dyn Fn(&Loaded) -> Vec<String>| -> String {
        let entries: Vec<String> = loaded
            .iter()
            .filter_map(|module| {
                let fields = fields(module);
                (!fields.is_empty()).then(|| format!("{}&{}", module.name, fields.join("&")))
            })
            .collect();
        entries.join(":")
    };
    store(env, "__MODULES_LMPREREQ", record(&|module| module.prereqs.iter().map(|group| group.join("|")).collect()));
    store(env, "__MODULES_LMCONFLICT", record(&|module| module.conflicts.clone()));
    store(env, "__MODULES_LMTAG", record(&|module| if module.auto { vec!["auto-loaded".into()] } else { vec![] }));
    store(env, "__MODULES_LMALTNAME", record(&|module| module.alt_names.iter().map(AltName::field).collect()));
}

/// Loaded modules matching `designation`, most recently loaded last.
pub fn matching<'a>(loaded: &'a [Loaded], designation: &str) -> Vec<&'a Loaded> {
    loaded.iter().filter(|module| module.matches(designation)).collect()
}

fn store(env: &mut Env, name: &str, value: String) {
    if value.is_empty() {
        env.unset(name);
    } else {
        env.set(name, &value);
    }
}

fn list(env: &Env, name: &str) -> Vec<String> {
    crate::env::split(env.get(name).unwrap_or(""), ":")
}

/// `mod&field&field` entries.
fn records(env: &Env, name: &str) -> Vec<Vec<String>> {
    list(env, name).into_iter().map(|entry| entry.split('&').map(str::to_string).collect()).collect()
}

/// The fields of `name`'s entry.
fn find(records: &[Vec<String>], name: &str) -> Vec<String> {
    records
        .iter()
        .find(|fields| fields.first().is_some_and(|first| first == name))
        .map_or(Vec::new(), |fields| fields[1..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_round_trips_through_the_environment() {
        let loaded = vec![
            Loaded {
                name: "zlib/1.2.13".into(),
                file: "/m/zlib/1.2.13".into(),
                auto: true,
                conflicts: vec!["zlib".into()],
                alt_names: vec![
                    AltName::Symbol("zlib/default".into()),
                    AltName::Symbol("zlib".into()),
                    AltName::Alias("z".into()),
                    AltName::Auto("zlib/latest".into()),
                ],
                ..Loaded::default()
            },
            Loaded {
                name: "netlib/3.0".into(),
                file: "/m/netlib/3.0".into(),
                prereqs: vec![vec!["zlib".into()], vec!["a".into(), "b".into()]],
                ..Loaded::default()
            },
        ];
        let mut env = Env::new(Vec::new());
        write(&mut env, &loaded);
        assert_eq!(env.get("LOADEDMODULES"), Some("zlib/1.2.13:netlib/3.0"));
        assert_eq!(env.get("__MODULES_LMPREREQ"), Some("netlib/3.0&zlib&a|b"));
        assert_eq!(env.get("__MODULES_LMTAG"), Some("zlib/1.2.13&auto-loaded"));
        assert_eq!(env.get("__MODULES_LMALTNAME"), Some("zlib/1.2.13&zlib/default&zlib&al|z&as|zlib/latest"));
        assert_eq!(read(&env), loaded);
        write(&mut env, &[]);
        assert!(env.vars().is_empty(), "nothing loaded: nothing left");
    }

    #[test]
    fn designations_match_names_bare_names_and_alternatives() {
        let alt_names = vec![AltName::Alias("sam".into()), AltName::Auto("bio/samtools/latest".into())];
        let module = Loaded { name: "bio/samtools/1.17".into(), alt_names, ..Loaded::default() };
        for designation in ["bio/samtools/1.17", "bio/samtools", "bio", "sam", "bio/samtools/latest"] {
            assert!(module.matches(designation), "{designation}");
        }
        let zlib = Loaded { name: "zlib/1.3.1".into(), ..Loaded::default() };
        assert!(zlib.matches("zlib/1") && zlib.matches("zlib/1.3") && !zlib.matches("zlib/1.31"));
        for designation in ["bio/sam", "samtools", "bio/samtools/1.1", "al|sam", "bio/samtools/default"] {
            assert!(!module.matches(designation), "{designation}");
        }
    }

    #[test]
    fn the_state_an_older_release_wrote_still_loads() {
        // earlier releases wrote every other name without a prefix (an alias too)
        let env = Env::new(vec![
            ("LOADEDMODULES".to_string(), "openmpi/4.1.6:app/1.0".to_string()),
            ("_LMFILES_".to_string(), "/m/openmpi/4.1.6:/m/app/1.0".to_string()),
            ("__MODULES_LMALTNAME".to_string(), "openmpi/4.1.6&mpi:app/1.0&app".to_string()),
            ("__MODULES_LMPREREQ".to_string(), "app/1.0&mpi".to_string()),
            ("__MODULES_LMTAG".to_string(), "openmpi/4.1.6&auto-loaded".to_string()),
        ]);
        let loaded = read(&env);
        assert_eq!(loaded[0].alt_names, [AltName::Symbol("mpi".into())]);
        assert!(loaded[0].auto && loaded[0].matches("mpi"));
        assert_eq!(matching(&loaded, "app").len(), 1);
    }
}
