//! How Environment Modules 5.2 lays out what people read: the dashed modulepath header, the
//! column-major grid of `avail` and `list` (modules.md 4.1), the `show` separator and command
//! lines, and the `whatis` lines.
//!
//! Owns: widths and padding, byte for byte. Pure: no environment, no files, no terminal
//! queries (the width is an argument). Widths count characters, not bytes.

/// `------ <path> ------` padded with dashes to `width`.
pub fn header(path: &str, width: usize) -> String {
    let len = path.chars().count();
    let room = width.saturating_sub(len + 2);
    let left = (room / 2).max(1);
    let right = room.saturating_sub(left).max(1);
    format!("{} {path} {}", "-".repeat(left), "-".repeat(right))
}

/// The separator around `show` and `help` output: 67 dashes, fewer on a narrower terminal.
pub fn separator(width: usize) -> String {
    "-".repeat(67.min(width.max(1)))
}

/// One `show` line: the command, a tab (two when the name is shorter than 8 characters), then
/// the arguments as a Tcl list (already rendered by the caller).
pub fn show_line(command: &str, rendered_args: &str) -> String {
    let tabs = if command.chars().count() < 8 { "\t\t" } else { "\t" };
    if rendered_args.is_empty() {
        return command.to_string();
    }
    format!("{command}{tabs}{rendered_args}")
}

/// One `whatis` line: the module name right-aligned in 20 columns, `: `, the text.
pub fn whatis_line(module: &str, text: &str) -> String {
    format!("{module:>20}: {text}")
}

/// The grid of `entries` in `width` columns, column-major; `numbered` prefixes each entry
/// with `%2d) ` as `list` does. Returns the lines, trailing spaces kept.
pub fn grid(entries: &[String], width: usize, numbered: bool) -> Vec<String> {
    if entries.is_empty() {
        return Vec::new();
    }
    let prefix = if numbered { 4 } else { 0 };
    let cells: Vec<usize> = entries.iter().map(|entry| entry.chars().count() + 2).collect();
    let rows = layout_rows(&cells, width, prefix);
    let widths = column_widths(&cells, rows);
    (0..rows)
        .map(|row| {
            let mut line = String::new();
            for (column, column_width) in widths.iter().enumerate() {
                let Some(entry) = entries.get(column * rows + row) else { break };
                if numbered {
                    line.push_str(&format!("{:>2}) ", column * rows + row + 1));
                }
                line.push_str(entry);
                let pad = column_width - entry.chars().count();
                line.push_str(&" ".repeat(pad));
            }
            line
        })
        .collect()
}

/// The number of rows of the grid (modules.md 4.1, steps 1 to 3).
fn layout_rows(cells: &[usize], width: usize, prefix: usize) -> usize {
    let count = cells.len();
    let widest = cells.iter().copied().max().unwrap_or(1).max(1);
    let mut columns = width.saturating_sub(prefix) / widest;
    if columns == 0 {
        return count;
    }
    let mut remembered: Option<usize> = None;
    loop {
        let rows = count.div_ceil(columns);
        if fits(cells, rows, width, prefix) {
            remembered = Some(rows);
            if rows == 1 {
                return rows;
            }
            columns += 1;
            continue;
        }
        let mut more = rows;
        loop {
            more += 1;
            if let Some(known) = remembered {
                if more >= known {
                    return known;
                }
            }
            if more >= count || fits(cells, more, width, prefix) {
                return more.min(count);
            }
        }
    }
}

fn column_widths(cells: &[usize], rows: usize) -> Vec<usize> {
    cells.chunks(rows.max(1)).map(|column| column.iter().copied().max().unwrap_or(0)).collect()
}

/// Whether every row of the `rows`-row layout is at most `width` wide.
fn fits(cells: &[usize], rows: usize, width: usize, prefix: usize) -> bool {
    let widths = column_widths(cells, rows);
    (0..rows).all(|row| {
        let used: usize = widths
            .iter()
            .enumerate()
            .filter(|(column, _)| column * rows + row < cells.len())
            .map(|(_, column_width)| column_width + prefix)
            .sum();
        used <= width
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| item.to_string()).collect()
    }

    #[test]
    fn headers_are_centred_in_dashes() {
        let line = header("/apps/modulefiles", 80);
        assert_eq!(line.len(), 80);
        assert_eq!(line, format!("{} /apps/modulefiles {}", "-".repeat(30), "-".repeat(31)));
        assert_eq!(header(&"x".repeat(100), 80), format!("- {} -", "x".repeat(100)));
    }

    #[test]
    fn the_reference_avail_grid() {
        let entries = strings(&[
            "bio/samtools/1.9",
            "bio/samtools/1.17",
            "netlib/3.0(default)",
            "sam(@)",
            "zlib/1.2.13(default)",
            "zlib/1.3.1(testing)",
        ]);
        assert_eq!(
            grid(&entries, 80, false),
            [
                "bio/samtools/1.9   netlib/3.0(default)  zlib/1.2.13(default)  ",
                "bio/samtools/1.17  sam(@)               zlib/1.3.1(testing)   ",
            ]
        );
    }

    #[test]
    fn the_reference_list_grid() {
        let entries = strings(&["zlib/1.2.13(default) <aL>", "netlib/3.0(default)"]);
        assert_eq!(grid(&entries, 80, true), [" 1) zlib/1.2.13(default) <aL>   2) netlib/3.0(default)  "]);
    }

    #[test]
    fn too_wide_entries_stack_in_one_column() {
        let entries = strings(&[&"a".repeat(90), "b"]);
        let lines = grid(&entries, 80, false);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].len(), 92, "padded to the column: {lines:?}");
    }

    #[test]
    fn every_line_fits_and_entries_run_down_then_across() {
        let entries: Vec<String> = (0..57).map(|i| format!("mod{i}/{}", "1.".repeat(i % 7))).collect();
        for width in [40, 80, 133] {
            let lines = grid(&entries, width, false);
            assert!(lines.iter().all(|line| line.len() <= width), "{width}: {lines:?}");
            assert!(lines[0].starts_with("mod0/  "));
            assert!(lines[1].starts_with("mod1/1.  "), "{lines:?}");
        }
    }

    #[test]
    fn show_and_whatis_lines() {
        assert_eq!(show_line("setenv", "ZLIB_ROOT /sw"), "setenv\t\tZLIB_ROOT /sw");
        assert_eq!(show_line("prepend-path", "PATH /sw/bin"), "prepend-path\tPATH /sw/bin");
        assert_eq!(whatis_line("zlib/1.3.1", "Name: zlib"), "          zlib/1.3.1: Name: zlib");
        assert_eq!(separator(80).len(), 67);
    }
}
