//! Combining `-l` lists (pbs-reference section 1.4): among directives the first occurrence of
//! a resource wins (OpenPBS) with a warning for each ignored one; the command line then
//! overrides directives per resource name.

/// Merges `-l` lists per resource name. `later` entries replace earlier ones of the same name
/// (command line over directives); see [`merge_directive_lists`] for the directive rule.
pub fn merge_override(base: &mut Vec<(String, String)>, later: &[(String, String)]) {
    for (name, value) in later {
        match base.iter_mut().find(|(existing, _)| existing == name) {
            Some(slot) => slot.1 = value.clone(),
            None => base.push((name.clone(), value.clone())),
        }
    }
}

/// Merges the `-l` lists of several directives, each given with its 1-based script line, in
/// script order. The first occurrence of a resource name wins (OpenPBS); every later one is
/// dropped with a warning naming its line, e.g.
/// `line 5: resource walltime already set by an earlier directive; 02:00:00 ignored`.
/// A name repeated within one list follows the same rule.
pub fn merge_directive_lists(lists: &[(usize, Vec<(String, String)>)]) -> (Vec<(String, String)>, Vec<String>) {
    let mut merged: Vec<(String, String)> = Vec::new();
    let mut warnings = Vec::new();
    for (line, list) in lists {
        for (name, value) in list {
            if merged.iter().any(|(existing, _)| existing == name) {
                warnings
                    .push(format!("line {line}: resource {name} already set by an earlier directive; {value} ignored"));
            } else {
                merged.push((name.clone(), value.clone()));
            }
        }
    }
    (merged, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn command_line_overrides_per_name() {
        // pbs-reference 1.4: `qsub -l walltime=1:00:00` over `#PBS -l walltime=2:00:00,mem=2gb`.
        let mut base = pairs(&[("walltime", "2:00:00"), ("mem", "2gb")]);
        merge_override(&mut base, &pairs(&[("walltime", "1:00:00"), ("ncpus", "2")]));
        assert_eq!(base, pairs(&[("walltime", "1:00:00"), ("mem", "2gb"), ("ncpus", "2")]));
    }

    #[test]
    fn first_directive_wins_with_warnings() {
        let lists = vec![
            (2, pairs(&[("walltime", "01:00:00"), ("mem", "2gb")])),
            (3, pairs(&[("select", "1:ncpus=2")])),
            (5, pairs(&[("walltime", "02:00:00"), ("ncpus", "4")])),
            (6, pairs(&[("select", "2:ncpus=8"), ("ncpus", "8")])),
        ];
        let (merged, warnings) = merge_directive_lists(&lists);
        assert_eq!(merged, pairs(&[("walltime", "01:00:00"), ("mem", "2gb"), ("select", "1:ncpus=2"), ("ncpus", "4")]));
        insta::assert_snapshot!(warnings.join("\n"), @r"
        line 5: resource walltime already set by an earlier directive; 02:00:00 ignored
        line 6: resource select already set by an earlier directive; 2:ncpus=8 ignored
        line 6: resource ncpus already set by an earlier directive; 8 ignored
        ");
    }

    #[test]
    fn repeat_within_one_directive_keeps_the_first() {
        let (merged, warnings) = merge_directive_lists(&[(4, pairs(&[("mem", "1gb"), ("mem", "2gb")]))]);
        assert_eq!(merged, pairs(&[("mem", "1gb")]));
        assert_eq!(warnings, vec!["line 4: resource mem already set by an earlier directive; 2gb ignored"]);
    }

    #[test]
    fn nothing_to_merge() {
        assert_eq!(merge_directive_lists(&[]), (vec![], vec![]));
    }
}
