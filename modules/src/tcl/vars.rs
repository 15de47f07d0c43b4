//! Variable storage: call frames holding scalars, arrays and upvar/global links; lookup, set, unset and
//! linking with Tcl's error messages; the embedder's global-variable accessors.

use std::collections::{BTreeMap, HashMap};

use super::{error, Exception, Interp, TclError};

/// A variable slot in a frame.
#[derive(Debug, Clone)]
pub(crate) enum Var {
    Scalar(String),
    Array(BTreeMap<String, String>),
    /// An alias (`upvar`, `global`) for a variable (or array element) in another frame.
    Link {
        frame: usize,
        name: String,
        key: Option<String>,
    },
}

/// A variable frame: the global frame (0) or one procedure call.
#[derive(Debug)]
pub(crate) struct Frame {
    pub vars: HashMap<String, Var>,
    /// The frame the call was made from.
    pub parent: usize,
    /// `info level` of this frame.
    pub level: usize,
    /// The words of the call (`info level 0`).
    pub call: Vec<String>,
}

impl Frame {
    /// An empty frame.
    pub fn new(parent: usize, level: usize, call: Vec<String>) -> Frame {
        Frame { vars: HashMap::new(), parent, level, call }
    }

    /// Sets a local scalar (argument binding).
    pub fn set_local(&mut self, name: &str, value: String) {
        self.vars.insert(name.to_string(), Var::Scalar(value));
    }
}

/// Splits `a(b)` into `("a", Some("b"))`; other names into `(name, None)`.
pub(crate) fn split_name(name: &str) -> (&str, Option<&str>) {
    if name.ends_with(')') {
        if let Some(i) = name.find('(') {
            if let (Some(base), Some(key)) = (name.get(..i), name.get(i + 1..name.len() - 1)) {
                return (base, Some(key));
            }
        }
    }
    (name, None)
}

fn display(name: &str, key: Option<&str>) -> String {
    match key {
        Some(k) => format!("{name}({k})"),
        None => name.to_string(),
    }
}

/// Where a variable reference ends up after following links.
struct Loc {
    frame: usize,
    name: String,
    key: Option<String>,
}

impl<C> Interp<C> {
    fn locate(&self, start: usize, name: &str, key: Option<&str>) -> Loc {
        let (mut frame, name) = match name.strip_prefix("::") {
            Some(n) => (0, n),
            None => (start, name),
        };
        let mut name = name.to_string();
        let mut key = key.map(str::to_string);
        for _ in 0..100 {
            match self.frames.get(frame).and_then(|f| f.vars.get(&name)) {
                Some(Var::Link { frame: f, name: n, key: k }) => {
                    frame = *f;
                    name = n.clone();
                    if k.is_some() {
                        key = k.clone();
                    }
                }
                _ => break,
            }
        }
        Loc { frame, name, key }
    }

    fn slot(&self, loc: &Loc) -> Option<&Var> {
        self.frames.get(loc.frame).and_then(|f| f.vars.get(&loc.name))
    }

    /// Reads `name` or the element `name(key)` in the current frame.
    pub(crate) fn get_var(&self, name: &str, key: Option<&str>) -> Result<String, TclError> {
        self.get_var_in(self.cur, name, key)
    }

    fn get_var_in(&self, start: usize, name: &str, key: Option<&str>) -> Result<String, TclError> {
        let loc = self.locate(start, name, key);
        let shown = display(name, key);
        let fail = |why: &str| TclError::new(format!("can't read \"{shown}\": {why}"));
        match (self.slot(&loc), &loc.key) {
            (Some(Var::Scalar(s)), None) => Ok(s.clone()),
            (Some(Var::Array(_)), None) => Err(fail("variable is array")),
            (Some(Var::Array(a)), Some(k)) => a.get(k).cloned().ok_or_else(|| fail("no such element in array")),
            (Some(Var::Scalar(_)), Some(_)) => Err(fail("variable isn't array")),
            _ => Err(fail("no such variable")),
        }
    }

    /// Reads a variable given as one name, `a` or `a(b)`.
    pub(crate) fn get_named(&self, full: &str) -> Result<String, TclError> {
        let (name, key) = split_name(full);
        self.get_var(name, key)
    }

    /// Sets `name` or `name(key)` in the current frame, returning the value.
    pub(crate) fn set_var(&mut self, name: &str, key: Option<&str>, value: String) -> Result<String, TclError> {
        self.set_var_in(self.cur, name, key, value)
    }

    fn set_var_in(&mut self, start: usize, name: &str, key: Option<&str>, value: String) -> Result<String, TclError> {
        let loc = self.locate(start, name, key);
        let shown = display(name, key);
        let Some(frame) = self.frames.get_mut(loc.frame) else {
            return Err(TclError::new(format!("can't set \"{shown}\": no such frame")));
        };
        let slot = frame.vars.get_mut(&loc.name);
        match (slot, loc.key) {
            (Some(Var::Array(_)), None) => Err(TclError::new(format!("can't set \"{shown}\": variable is array"))),
            (Some(Var::Scalar(_)), Some(_)) => {
                Err(TclError::new(format!("can't set \"{shown}\": variable isn't array")))
            }
            (Some(Var::Array(a)), Some(k)) => {
                a.insert(k, value.clone());
                Ok(value)
            }
            (Some(Var::Link { .. }), _) => Err(TclError::new(format!("can't set \"{shown}\": too many links"))),
            (Some(Var::Scalar(s)), None) => {
                s.clone_from(&value);
                Ok(value)
            }
            (None, None) => {
                frame.vars.insert(loc.name, Var::Scalar(value.clone()));
                Ok(value)
            }
            (None, Some(k)) => {
                frame.vars.insert(loc.name, Var::Array(BTreeMap::from([(k, value.clone())])));
                Ok(value)
            }
        }
    }

    /// Sets a variable given as one name, `a` or `a(b)`.
    pub(crate) fn set_named(&mut self, full: &str, value: String) -> Result<String, TclError> {
        let (name, key) = split_name(full);
        self.set_var(name, key, value)
    }

    /// Whether `a` or `a(b)` exists.
    pub(crate) fn var_exists(&self, full: &str) -> bool {
        let (name, key) = split_name(full);
        let loc = self.locate(self.cur, name, key);
        match (self.slot(&loc), &loc.key) {
            (Some(Var::Scalar(_) | Var::Array(_)), None) => true,
            (Some(Var::Array(a)), Some(k)) => a.contains_key(k),
            _ => false,
        }
    }

    /// Unsets `a` or `a(b)`.
    pub(crate) fn unset_named(&mut self, full: &str) -> Result<(), Exception> {
        let (name, key) = split_name(full);
        let loc = self.locate(self.cur, name, key);
        let fail = |why: &str| error(format!("can't unset \"{full}\": {why}"));
        let Some(frame) = self.frames.get_mut(loc.frame) else { return Err(fail("no such variable")) };
        match (frame.vars.get_mut(&loc.name), &loc.key) {
            (Some(Var::Scalar(_) | Var::Array(_)), None) => {
                frame.vars.remove(&loc.name);
            }
            (Some(Var::Array(a)), Some(k)) => {
                a.remove(k).ok_or_else(|| fail("no such element in array"))?;
            }
            (Some(Var::Scalar(_)), Some(_)) => return Err(fail("variable isn't array")),
            _ => return Err(fail("no such variable")),
        }
        Ok(())
    }

    /// The array named `name` (following links), if it is one.
    pub(crate) fn array_ref(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        match self.slot(&self.locate(self.cur, name, None)) {
            Some(Var::Array(a)) => Some(a),
            _ => None,
        }
    }

    /// Mutable access to the array `name`, creating it if `create` and absent; errors if it is a scalar.
    pub(crate) fn array_mut(
        &mut self,
        name: &str,
        create: bool,
    ) -> Result<Option<&mut BTreeMap<String, String>>, Exception> {
        let loc = self.locate(self.cur, name, None);
        let Some(frame) = self.frames.get_mut(loc.frame) else { return Ok(None) };
        if create && !frame.vars.contains_key(&loc.name) {
            frame.vars.insert(loc.name.clone(), Var::Array(BTreeMap::new()));
        }
        match frame.vars.get_mut(&loc.name) {
            Some(Var::Array(a)) => Ok(Some(a)),
            Some(_) if create => Err(error(format!("can't set \"{name}(...)\": variable isn't array"))),
            _ => Ok(None),
        }
    }

    /// Makes `local` in the current frame an alias of `other` as seen from frame `target`.
    pub(crate) fn link_var(&mut self, target: usize, other: &str, local: &str) -> Result<(), Exception> {
        if split_name(local).1.is_some() {
            return Err(error(format!(
                "bad variable name \"{local}\": can't create a scalar variable that looks like an array element"
            )));
        }
        let (name, key) = split_name(other);
        let loc = self.locate(target, name, key);
        if loc.frame == self.cur && loc.name == local {
            return Err(error("can't upvar from variable to itself"));
        }
        let Some(frame) = self.frames.get_mut(self.cur) else { return Ok(()) };
        if matches!(frame.vars.get(local), Some(Var::Scalar(_) | Var::Array(_))) {
            return Err(error(format!("variable \"{local}\" already exists")));
        }
        frame.vars.insert(local.to_string(), Var::Link { frame: loc.frame, name: loc.name, key: loc.key });
        Ok(())
    }

    /// The frame `spec` (`N` levels up or `#N` absolute) refers to from the current frame.
    pub(crate) fn frame_for_level(&self, spec: &str) -> Option<usize> {
        let cur_level = self.frames.get(self.cur)?.level;
        let target = match spec.strip_prefix('#') {
            Some(abs) => abs.parse::<usize>().ok()?,
            None => cur_level.checked_sub(spec.parse::<usize>().ok()?)?,
        };
        let mut f = self.cur;
        for _ in 0..self.frames.len() + 1 {
            let fr = self.frames.get(f)?;
            if fr.level == target {
                return Some(f);
            }
            if fr.level < target || f == 0 {
                return None;
            }
            f = fr.parent;
        }
        None
    }

    /// Variable names visible in frame `f` (locals and links).
    pub(crate) fn var_names(&self, f: usize) -> Vec<String> {
        let mut v: Vec<String> = self.frames.get(f).map(|fr| fr.vars.keys().cloned().collect()).unwrap_or_default();
        v.sort();
        v
    }

    /// Sets a global scalar variable (ignored if the name is a global array).
    pub fn set_global(&mut self, name: &str, value: &str) {
        let _ = self.set_var_in(0, name, None, value.to_string());
    }

    /// Reads a global scalar variable.
    pub fn get_global(&self, name: &str) -> Option<String> {
        self.get_var_in(0, name, None).ok()
    }

    /// Sets a global array element (ignored if the name is a global scalar).
    pub fn set_global_elem(&mut self, array: &str, key: &str, value: &str) {
        let _ = self.set_var_in(0, array, Some(key), value.to_string());
    }

    /// Removes a global array element if present.
    pub fn unset_global_elem(&mut self, array: &str, key: &str) {
        let loc = self.locate(0, array, Some(key));
        if let (Some(Var::Array(a)), Some(k)) =
            (self.frames.get_mut(loc.frame).and_then(|f| f.vars.get_mut(&loc.name)), &loc.key)
        {
            a.remove(k);
        }
    }

    /// Reads a global array element.
    pub fn get_global_elem(&self, array: &str, key: &str) -> Option<String> {
        self.get_var_in(0, array, Some(key)).ok()
    }
}
