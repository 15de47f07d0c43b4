//! One PBS log line: `MM/DD/YYYY HH:MM:SS;EEEE;object;type;name;message` for daemon logs
//! (event class in hex, e.g. `0008` for job events), `MM/DD/YYYY HH:MM:SS;T;id;message` for
//! accounting records. Pure text in, text out.

/// A daemon log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// `MM/DD/YYYY HH:MM:SS`, local time, with `.ffffff` microseconds in high-resolution logs.
    pub date: String,
    /// Event class, 4 hex digits (`0001` error, `0002` system, `0004` admin, `0008` job,
    /// `0080` debug, `0100` debug2).
    pub event: String,
    /// Who writes: `Server@<name>`, `pbs_mom`.
    pub object: String,
    /// What the line is about: `Job`, `Node`, `Svr`.
    pub kind: String,
    /// Which one: a job id, a node name, or the object.
    pub name: String,
    pub message: String,
}

/// The microseconds of a high-resolution time stamp (`... HH:MM:SS.ffffff`), 0 without.
pub fn micros(date: &str) -> u32 {
    date.split_once('.').and_then(|(_, fraction)| format!("{fraction:0<6}").get(..6)?.parse().ok()).unwrap_or(0)
}

impl LogLine {
    /// The line's text, without the newline. `;` and line breaks in fields become `,` and
    /// spaces so the line splits back into the same six fields.
    pub fn format(&self) -> String {
        let mut text = format!("{};{};", self.date, self.event);
        for part in [&self.object, &self.kind, &self.name] {
            LogLine::push_clean(&mut text, part);
            text.push(';');
        }
        LogLine::push_clean(&mut text, &self.message);
        text
    }

    /// Appends `part` with what would break a line's fields made harmless: `;` becomes `,` and
    /// a line break a space.
    pub fn push_clean(text: &mut String, part: &str) {
        if !part.contains([';', '\n', '\r']) {
            text.push_str(part);
            return;
        }
        text.extend(part.chars().map(|c| match c {
            ';' => ',',
            '\n' | '\r' => ' ',
            c => c,
        }));
    }

    /// Parses a daemon log line; `None` for anything else (an accounting record, a panic
    /// message, a line of an older log format).
    pub fn parse(line: &str) -> Option<LogLine> {
        let mut fields = line.splitn(6, ';');
        let date = fields.next()?;
        crate::Tm::parse_pbs_date(date)?;
        let line = LogLine {
            date: date.to_string(),
            event: fields.next()?.to_string(),
            object: fields.next()?.to_string(),
            kind: fields.next()?.to_string(),
            name: fields.next()?.to_string(),
            message: fields.next()?.to_string(),
        };
        Some(line)
    }
}

/// An accounting record: `date;type;id;message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountingLine {
    pub date: String,
    pub record_type: String,
    pub id: String,
    pub message: String,
}

impl AccountingLine {
    /// The record's text, without the newline.
    pub fn format(&self) -> String {
        format!("{};{};{};{}", self.date, self.record_type, self.id, self.message.replace(['\n', '\r'], " "))
    }

    /// Parses an accounting record; `None` if the line is not one.
    pub fn parse(line: &str) -> Option<AccountingLine> {
        let mut fields = line.splitn(4, ';');
        let date = fields.next()?;
        crate::Tm::parse_pbs_date(date)?;
        Some(AccountingLine {
            date: date.to_string(),
            record_type: fields.next()?.to_string(),
            id: fields.next()?.to_string(),
            message: fields.next()?.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_line_round_trip() {
        let line = LogLine {
            date: "11/21/2023 22:26:00".into(),
            event: "0008".into(),
            object: "Server@head".into(),
            kind: "Job".into(),
            name: "12.head".into(),
            message: "Job Queued; at request\nof root".into(),
        };
        let text = line.format();
        assert_eq!(text, "11/21/2023 22:26:00;0008;Server@head;Job;12.head;Job Queued, at request of root");
        let parsed = LogLine::parse(&text).unwrap();
        assert_eq!(parsed.name, "12.head");
        assert_eq!(parsed.message, "Job Queued, at request of root");
        assert_eq!(LogLine::parse("thread 'main' panicked at src/x.rs"), None);
        let odd = LogLine { object: "pbs;mom".into(), name: "12;head\r".into(), message: "\r\n".into(), ..line };
        assert_eq!(odd.format(), "11/21/2023 22:26:00;0008;pbs,mom;Job;12,head ;  ");
    }

    #[test]
    fn high_resolution_stamps() {
        assert_eq!(micros("11/21/2023 22:26:00.000120"), 120);
        assert_eq!(micros("11/21/2023 22:26:00.5"), 500_000);
        assert_eq!(micros("11/21/2023 22:26:00"), 0);
    }

    #[test]
    fn accounting_line_round_trip() {
        let text = "11/21/2023 22:27:00;D;124.head;requestor=alice@login1";
        let parsed = AccountingLine::parse(text).unwrap();
        assert_eq!(parsed.record_type, "D");
        assert_eq!(parsed.id, "124.head");
        assert_eq!(parsed.format(), text);
    }
}
