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

/// Fields recorded from a span, kept in its extensions.
#[derive(Default)]
struct Fields {
    message: String,
    pairs: Vec<(String, String)>,
}

impl Fields {
    fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" && self.message.is_empty() {
            self.message = value.to_string();
        } else {
            self.pairs.push((field.name().to_string(), value.to_string()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
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
                let extensions = span.extensions();
                if let Some(span_fields) = extensions.get::<Fields>() {
                    job_id = job_id.or_else(|| span_fields.get("job_id").map(str::to_string));
                    node = node.or_else(|| span_fields.get("node").map(str::to_string));
                }
            }
        }
        let level = *event.metadata().level();
        // The whole line with its newline in one write: the daemons' stderr is unbuffered, and
        // `writeln!` would make a system call per formatted piece.
        let mut text = self.line(level, job_id, node, &fields).format();
        text.push('\n');
        let mut writer = self.writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let _ = writer.write_all(text.as_bytes());
        let _ = writer.flush();
    }
}

impl<W> PbsLogLayer<W> {
    fn line(&self, level: Level, job_id: Option<String>, node: Option<String>, fields: &Fields) -> LogLine {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
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
            (None, None) => ("Svr", self.object.clone()),
        };
        let mut message = fields.message.clone();
        for (key, value) in fields.pairs.iter().filter(|(key, _)| key != "job_id" && (key != "node" || kind != "Node"))
        {
            if !message.is_empty() {
                message.push(' ');
            }
            let _ = write!(message, "{key}={value}");
        }
        LogLine {
            date: format!("{}.{:06}", Tm::local(now.as_secs() as i64).pbs_date(), now.subsec_micros()),
            event: event.to_string(),
            object: self.object.clone(),
            kind: kind.to_string(),
            name,
            message,
        }
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
}
