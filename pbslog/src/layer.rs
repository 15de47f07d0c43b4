//! The daemons' log format: a tracing layer writing one OpenPBS-style line per event
//! (`MM/DD/YYYY HH:MM:SS.ffffff;0008;Server@head;Job;12.head;Job Queued at request of ...`,
//! the time stamp in OpenPBS's high-resolution form so lines of different daemons merge in
//! the order they happened) to a writer (the daemons' stderr, which `minipbs up` sends to
//! `logs/<daemon>.log`).
//!
//! A `job_id` field on the event or on any enclosing span makes the line a job line (type
//! `Job`, name = the id), so `tracejob` finds it; else a `node` field makes it a node line.
//! The event's other fields follow the message as `key=value`. Must not: filter events (the
//! subscriber's filter does), buffer lines, or know what a job is.

use crate::line::LogLine;
use crate::time::Tm;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::Mutex;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Writes PBS log lines.
pub struct PbsLogLayer<W> {
    object: String,
    writer: Mutex<W>,
}

impl<W: Write> PbsLogLayer<W> {
    /// `object` names the writer in every line (`Server@head`, `pbs_mom`).
    pub fn new(object: &str, writer: W) -> PbsLogLayer<W> {
        PbsLogLayer { object: object.to_string(), writer: Mutex::new(writer) }
    }
}

/// Fields recorded from a span or an event. Names are the callsite's `&'static str`s; only
/// values are copied.
#[derive(Default)]
struct Fields {
    message: String,
    pairs: Vec<(&'static str, String)>,
}

impl Fields {
    fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.as_str())
    }

    fn record_value(&mut self, field: &Field, value: String) {
        if field.name() == "message" && self.message.is_empty() {
            self.message = value;
        } else {
            self.pairs.push((field.name(), value));
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_value(field, value.to_string());
    }

    // Numbers and flags once into their text (tracing's default goes through `record_debug`,
    // a `format!` and then a copy of it).
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_value(field, value.to_string());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record_value(field, value.to_string());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.record_value(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_value(field, format!("{value:?}"));
    }
}

impl<S, W> Layer<S> for PbsLogLayer<W>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: Write + 'static,
{
    fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, id: &tracing::span::Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut job_id = fields.get("job_id").map(str::to_string);
        let mut node = fields.get("node").map(str::to_string);
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                if job_id.is_some() && node.is_some() {
                    break;
                }
                let extensions = span.extensions();
                if let Some(span_fields) = extensions.get::<Fields>() {
                    job_id = job_id.or_else(|| span_fields.get("job_id").map(str::to_string));
                    node = node.or_else(|| span_fields.get("node").map(str::to_string));
                }
            }
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        // The whole line with its newline in one write: the daemons' stderr is unbuffered, and
        // `writeln!` would make a system call per formatted piece.
        let mut text = self.line(now, *event.metadata().level(), job_id.as_deref(), node.as_deref(), &fields);
        text.push('\n');
        let mut writer = self.writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let _ = writer.write_all(text.as_bytes());
        let _ = writer.flush();
    }
}

impl<W> PbsLogLayer<W> {
    /// The line, without its newline, as [`LogLine::format`] writes it, built in one buffer: a
    /// daemon writes several per job (issue 19).
    fn line(
        &self,
        now: std::time::Duration,
        level: Level,
        job_id: Option<&str>,
        node: Option<&str>,
        fields: &Fields,
    ) -> String {
        let event = match level {
            Level::ERROR => "0001",
            Level::WARN => "0004",
            Level::INFO if job_id.is_some() => "0008",
            Level::INFO => "0002",
            Level::DEBUG => "0080",
            Level::TRACE => "0100",
        };
        let (kind, name) = match (job_id, node) {
            (Some(job_id), _) => ("Job", job_id),
            (None, Some(node)) => ("Node", node),
            (None, None) => ("Svr", self.object.as_str()),
        };
        let mut text = String::with_capacity(128 + fields.message.len());
        let _ = write!(text, "{}.{:06};{event};", Tm::local(now.as_secs() as i64).pbs_date(), now.subsec_micros());
        for part in [self.object.as_str(), kind, name] {
            LogLine::push_clean(&mut text, part);
            text.push(';');
        }
        LogLine::push_clean(&mut text, &fields.message);
        let mut first = fields.message.is_empty();
        for (key, value) in
            fields.pairs.iter().filter(|(key, _)| *key != "job_id" && (*key != "node" || kind != "Node"))
        {
            if !first {
                text.push(' ');
            }
            first = false;
            LogLine::push_clean(&mut text, key);
            text.push('=');
            LogLine::push_clean(&mut text, value);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tracing_subscriber::prelude::*;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn job_ids_come_from_events_or_spans() {
        let sink = Sink::default();
        let subscriber = tracing_subscriber::registry().with(PbsLogLayer::new("pbs_mom", sink.clone()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(job_id = "12.head", exit_status = 0, "job ended");
            let span = tracing::info_span!("job", node = "node1", job_id = "13.head");
            span.in_scope(|| tracing::info!(session_id = 77, "job started"));
            tracing::warn!(node = "node2", "node down");
            tracing::info!("pbs_mom started");
        });
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<LogLine> = text.lines().map(|line| LogLine::parse(line).expect("parses")).collect();
        let short: Vec<String> =
            lines.iter().map(|l| format!("{};{};{};{};{}", l.event, l.object, l.kind, l.name, l.message)).collect();
        assert_eq!(
            short,
            [
                "0008;pbs_mom;Job;12.head;job ended exit_status=0",
                "0008;pbs_mom;Job;13.head;job started session_id=77",
                "0004;pbs_mom;Node;node2;node down",
                "0002;pbs_mom;Svr;pbs_mom;pbs_mom started",
            ]
        );
    }

    /// The line as the layer wrote it before it was built in one buffer: the message and its
    /// `key=value` pairs joined, then [`LogLine::format`].
    fn reference(
        object: &str,
        date: &str,
        event: &str,
        job_id: Option<&str>,
        node: Option<&str>,
        fields: &Fields,
    ) -> String {
        let (kind, name) = match (job_id, node) {
            (Some(job_id), _) => ("Job", job_id),
            (None, Some(node)) => ("Node", node),
            (None, None) => ("Svr", object),
        };
        let mut message = fields.message.clone();
        for (key, value) in
            fields.pairs.iter().filter(|(key, _)| *key != "job_id" && (*key != "node" || kind != "Node"))
        {
            if !message.is_empty() {
                message.push(' ');
            }
            message.push_str(&format!("{key}={value}"));
        }
        let line = LogLine {
            date: date.to_string(),
            event: event.to_string(),
            object: object.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
            message,
        };
        line.format()
    }

    proptest::proptest! {
        #[test]
        fn one_buffer_lines_equal_the_joined_lines(
            object in "[a-z@;\n]{0,8}",
            job_id in proptest::option::of("[0-9a-z.;\r]{0,8}"),
            node in proptest::option::of("[a-z0-9;\n]{0,8}"),
            message in "[ -~\n\r]{0,24}",
            values in proptest::collection::vec("[ -~\n]{0,10}", 0..4),
            keys in proptest::collection::vec(0usize..4, 0..4),
        ) {
            const KEYS: [&str; 4] = ["job_id", "node", "exit_status", "dest"];
            let pairs = keys.iter().zip(&values).map(|(k, v)| (KEYS[*k], v.clone())).collect();
            let fields = Fields { message, pairs };
            let layer = PbsLogLayer::new(&object, Vec::<u8>::new());
            let now = std::time::Duration::new(1_764_000_000, 123_456_000);
            let line = layer.line(now, Level::DEBUG, job_id.as_deref(), node.as_deref(), &fields);
            let date = format!("{}.123456", Tm::local(1_764_000_000).pbs_date());
            let expected = reference(&object, &date, "0080", job_id.as_deref(), node.as_deref(), &fields);
            proptest::prop_assert_eq!(line, expected);
        }
    }
}
