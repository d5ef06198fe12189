//! A trace in Perfetto's own protobuf format (`.pftrace`): the few messages of Perfetto's
//! published trace schema that a timeline of ranks needs, and the writer.
//!
//! Why: JSON spells out every field name of every event (70 to 130 bytes an event); the
//! protobuf form of the same trace is a fraction of that (names are interned: written once,
//! then referred to by number), and Perfetto (ui.perfetto.dev, `trace_processor`) reads it
//! natively. `mpsim plot` reads JSON only.
//!
//! The message types below are written by hand with `prost`'s derive, each field with the
//! number Perfetto's schema gives it (`protos/perfetto/trace/trace.proto`, `trace_packet.proto`,
//! `track_event/track_event.proto`, `track_event/track_descriptor.proto`,
//! `track_event/debug_annotation.proto`, `interned_data/interned_data.proto`); fields mpsim
//! does not write are left out, which protobuf allows. The schema is proto2, whose repeated numbers are not packed: `flow_ids` is
//! written unpacked, as Perfetto's decoder expects.
//!
//! What is written, all on one packet sequence:
//! 1. a track named after the process (`mpsim sim`), whose children keep the order of ranks,
//!    in the sequence's first packet, which clears its incremental state and interns every
//!    event name (`message`, then the span names in order of first use) and the annotation
//!    names `bytes` and `to` (every later event says it needs that state);
//! 2. a track per rank (`rank 3`) that has one ([`Trace::tracks`]);
//! 3. each span as a slice (begin, end) on its rank's track, by rank and then start, so that at
//!    a time where one span ends and the next begins the end comes first (Perfetto orders
//!    packets of equal time by their place in the file);
//! 4. each message as two instants named `message`: at its send on the sender's track, starting
//!    a flow (the arrow), and at its arrival on the receiver's, ending it; the send carries the
//!    `bytes` and `to` of the JSON's flow start as debug annotations.
//!
//! Times are the trace's nanoseconds, as packet timestamps.

use std::collections::HashMap;
use std::io;

use prost::Message;

use super::{Trace, TraceEvent};

/// Perfetto's `Trace`: the file is this message, a sequence of packets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PerfettoTrace {
    /// The packets, in the order written.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// Perfetto's `TracePacket`, with the fields mpsim writes. Its `data` is a `oneof` in the
/// schema: one of `track_event` and `track_descriptor` is set.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// When the event happened, ns.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The packet sequence (one writer's packets); mpsim writes one, numbered 1.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// `SEQ_INCREMENTAL_STATE_CLEARED` (1) on the first packet, `SEQ_NEEDS_INCREMENTAL_STATE`
    /// (2) on the events, which name things by interned number.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Names given numbers, for the later packets of the sequence.
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// A slice begin, end or instant.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// A track.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// Perfetto's `InternedData`: names given numbers (`iid`s) on a packet sequence.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    /// Event names.
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<InternedName>,
    /// Debug annotation names.
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<InternedName>,
}

/// Perfetto's `EventName` and `DebugAnnotationName` (the same fields): a name and its number.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedName {
    /// The number.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// Perfetto's `TrackDescriptor`: a named track, maybe the child of another.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// The track's id, which events name.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// The name shown.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// The parent track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// How the children are ordered: 3 (`EXPLICIT`) for by `sibling_order_rank`.
    #[prost(int32, optional, tag = "11")]
    pub child_ordering: Option<i32>,
    /// This track's place among its siblings.
    #[prost(int32, optional, tag = "12")]
    pub sibling_order_rank: Option<i32>,
}

/// The kind of a [`TrackEvent`] (Perfetto's `TrackEvent.Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum EventType {
    /// Not set.
    Unspecified = 0,
    /// A slice begins (`TYPE_SLICE_BEGIN`).
    SliceBegin = 1,
    /// The innermost open slice of the track ends (`TYPE_SLICE_END`).
    SliceEnd = 2,
    /// A slice of no duration (`TYPE_INSTANT`).
    Instant = 3,
}

/// Perfetto's `TrackEvent`, with the fields mpsim writes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Name and value pairs shown with the event.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// What kind of event.
    #[prost(enumeration = "EventType", optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The track it is on.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// The slice's name, interned ([`InternedData::event_names`]; none on an end).
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    /// Flows this event starts or continues.
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows this event ends.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// Perfetto's `DebugAnnotation`, for an unsigned value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// The name, interned ([`InternedData::debug_annotation_names`]).
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    /// The value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
}

/// The one packet sequence.
const SEQUENCE: u32 = 1;
/// `TracePacket.SEQ_INCREMENTAL_STATE_CLEARED`.
const INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `TracePacket.SEQ_NEEDS_INCREMENTAL_STATE`.
const NEEDS_INCREMENTAL_STATE: u32 = 2;
/// The interned number of the event name `message`; span names follow.
pub const MESSAGE_NAME: u64 = 1;
/// The interned number of the annotation name `bytes`.
pub const BYTES_ANNOTATION: u64 = 1;
/// The interned number of the annotation name `to`.
pub const TO_ANNOTATION: u64 = 2;
/// `TrackDescriptor.EXPLICIT`: children ordered by `sibling_order_rank`.
const CHILDREN_EXPLICIT: i32 = 3;
/// The process track's id; rank `r`'s is `r + 1` ([`rank_track`]), which never reaches it.
const PROCESS_TRACK: u64 = 1 << 33;
/// The field number of `Trace.packet`.
const PACKET_FIELD: u32 = 1;

/// The track id of `rank`.
pub fn rank_track(rank: u32) -> u64 {
    u64::from(rank) + 1
}

/// Writes `trace` (the module doc says what), packet by packet.
pub(super) fn write(trace: &Trace, out: impl io::Write) -> io::Result<()> {
    let mut w = Writer {
        out,
        buf: Vec::with_capacity(256),
    };
    let events = trace.events();
    // Event names by number: `message`, then the span names in order of first use.
    let mut names: Vec<&'static str> = vec!["message"];
    let mut iids: HashMap<&'static str, u64> = HashMap::from([("message", MESSAGE_NAME)]);
    for e in events {
        if let TraceEvent::Span { name, .. } = *e {
            iids.entry(name).or_insert_with(|| {
                names.push(name);
                names.len() as u64
            });
        }
    }
    let interned = |iid: u64, name: &str| InternedName {
        iid: Some(iid),
        name: Some(name.to_string()),
    };
    w.packet(TracePacket {
        sequence_flags: Some(INCREMENTAL_STATE_CLEARED),
        interned_data: Some(InternedData {
            event_names: (1..).zip(&names).map(|(iid, n)| interned(iid, n)).collect(),
            debug_annotation_names: vec![
                interned(BYTES_ANNOTATION, "bytes"),
                interned(TO_ANNOTATION, "to"),
            ],
        }),
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(PROCESS_TRACK),
            name: Some(trace.process().to_string()),
            child_ordering: Some(CHILDREN_EXPLICIT),
            ..TrackDescriptor::default()
        }),
        ..packet(None)
    })?;
    for rank in trace.tracks() {
        w.packet(TracePacket {
            track_descriptor: Some(TrackDescriptor {
                uuid: Some(rank_track(rank)),
                name: Some(format!("rank {rank}")),
                parent_uuid: Some(PROCESS_TRACK),
                sibling_order_rank: Some(i32::try_from(rank).unwrap_or(i32::MAX)),
                ..TrackDescriptor::default()
            }),
            ..packet(None)
        })?;
    }
    let mut spans: Vec<usize> = (0..events.len())
        .filter(|&i| matches!(events[i], TraceEvent::Span { .. }))
        .collect();
    // Stable: spans of one rank starting together stay in recorded order.
    spans.sort_by_key(|&i| match events[i] {
        TraceEvent::Span { rank, start_ns, .. } => (rank, start_ns),
        TraceEvent::Message { .. } => unreachable!("only spans were kept"),
    });
    for i in spans {
        if let TraceEvent::Span {
            rank,
            name,
            start_ns,
            end_ns,
            ..
        } = events[i]
        {
            w.event(
                start_ns,
                TrackEvent {
                    r#type: Some(EventType::SliceBegin as i32),
                    track_uuid: Some(rank_track(rank)),
                    name_iid: Some(iids[name]),
                    ..TrackEvent::default()
                },
            )?;
            w.event(
                end_ns,
                TrackEvent {
                    r#type: Some(EventType::SliceEnd as i32),
                    track_uuid: Some(rank_track(rank)),
                    ..TrackEvent::default()
                },
            )?;
        }
    }
    for e in events {
        if let TraceEvent::Message {
            id,
            from,
            to,
            sent_ns,
            arrival_ns,
            bytes,
        } = *e
        {
            w.event(
                sent_ns,
                TrackEvent {
                    debug_annotations: vec![
                        annotation(BYTES_ANNOTATION, bytes as u64),
                        annotation(TO_ANNOTATION, u64::from(to)),
                    ],
                    flow_ids: vec![id],
                    ..instant(from)
                },
            )?;
            if let Some(arrival_ns) = arrival_ns {
                w.event(
                    arrival_ns,
                    TrackEvent {
                        terminating_flow_ids: vec![id],
                        ..instant(to)
                    },
                )?;
            }
        }
    }
    Ok(())
}

/// A packet of the sequence at `timestamp`, with no data yet.
fn packet(timestamp: Option<u64>) -> TracePacket {
    TracePacket {
        timestamp,
        trusted_packet_sequence_id: Some(SEQUENCE),
        ..TracePacket::default()
    }
}

/// A message's end on `rank`'s track.
fn instant(rank: u32) -> TrackEvent {
    TrackEvent {
        r#type: Some(EventType::Instant as i32),
        track_uuid: Some(rank_track(rank)),
        name_iid: Some(MESSAGE_NAME),
        ..TrackEvent::default()
    }
}

fn annotation(name_iid: u64, value: u64) -> DebugAnnotation {
    DebugAnnotation {
        name_iid: Some(name_iid),
        uint_value: Some(value),
    }
}

/// Writes packets one by one as the elements of `Trace.packet`: the file is the `Trace`
/// message without holding it whole.
struct Writer<W> {
    out: W,
    buf: Vec<u8>,
}

impl<W: io::Write> Writer<W> {
    fn packet(&mut self, p: TracePacket) -> io::Result<()> {
        self.buf.clear();
        prost::encoding::encode_key(
            PACKET_FIELD,
            prost::encoding::WireType::LengthDelimited,
            &mut self.buf,
        );
        p.encode_length_delimited(&mut self.buf)
            .map_err(io::Error::other)?;
        self.out.write_all(&self.buf)
    }

    fn event(&mut self, at: u64, e: TrackEvent) -> io::Result<()> {
        self.packet(TracePacket {
            sequence_flags: Some(NEEDS_INCREMENTAL_STATE),
            track_event: Some(e),
            ..packet(Some(at))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceFilter;

    fn span(rank: u32, name: &'static str, start_ns: u64, end_ns: u64) -> TraceEvent {
        TraceEvent::Span {
            rank,
            name,
            start_ns,
            end_ns,
            unfinished: false,
        }
    }

    fn message(id: u64, from: u32, to: u32, sent_ns: u64, arrival_ns: Option<u64>) -> TraceEvent {
        TraceEvent::Message {
            id,
            from,
            to,
            sent_ns,
            arrival_ns,
            bytes: 8,
        }
    }

    /// The spans and messages of a written trace, read back from its bytes: slices paired by
    /// track (an end closes the track's innermost open slice, as Perfetto reads them) and
    /// flows by id. Sorted as Perfetto sorts: by time, then place in the file.
    fn read_back(bytes: &[u8]) -> (Vec<String>, Vec<TraceEvent>, Vec<TraceEvent>) {
        let t = PerfettoTrace::decode(bytes).expect("decodes");
        let mut tracks = Vec::new();
        let mut timed = Vec::new();
        let mut names = HashMap::new();
        for (i, p) in t.packet.iter().enumerate() {
            assert_eq!(p.trusted_packet_sequence_id, Some(SEQUENCE));
            let flags = match (i, p.track_event.is_some()) {
                (0, _) => Some(INCREMENTAL_STATE_CLEARED),
                (_, true) => Some(NEEDS_INCREMENTAL_STATE),
                (_, false) => None,
            };
            assert_eq!(p.sequence_flags, flags);
            for n in p.interned_data.iter().flat_map(|d| &d.event_names) {
                let name: &'static str = Box::leak(n.name.clone().unwrap().into_boxed_str());
                names.insert(n.iid.unwrap(), name);
            }
            if let Some(d) = &p.track_descriptor {
                tracks.push(d.name.clone().unwrap_or_default());
            }
            if let Some(e) = &p.track_event {
                timed.push((p.timestamp.expect("events have times"), i, e));
            }
        }
        timed.sort_by_key(|&(at, i, _)| (at, i));
        let mut open: HashMap<u64, Vec<(&'static str, u64)>> = HashMap::new();
        let mut spans = Vec::new();
        let mut sends = std::collections::BTreeMap::new();
        let mut messages = Vec::new();
        for (at, _, e) in timed {
            let track = e.track_uuid.expect("on a track");
            let rank = (track - 1) as u32;
            match e.r#type() {
                EventType::SliceBegin => open
                    .entry(track)
                    .or_default()
                    .push((names[&e.name_iid.expect("named")], at)),
                EventType::SliceEnd => {
                    let (name, start) = open.get_mut(&track).and_then(Vec::pop).expect("open");
                    spans.push(span(rank, name, start, at));
                }
                EventType::Instant => {
                    for &id in &e.flow_ids {
                        let to = e.debug_annotations[1].uint_value.expect("to") as u32;
                        sends.insert(id, (rank, to, at));
                    }
                    for &id in &e.terminating_flow_ids {
                        let (from, to, sent) = sends.remove(&id).expect("sent before");
                        assert_eq!(to, rank);
                        messages.push(message(id, from, to, sent, Some(at)));
                    }
                }
                EventType::Unspecified => panic!("untyped event"),
            }
        }
        for (id, (from, to, sent)) in sends {
            messages.push(message(id, from, to, sent, None));
        }
        assert!(open.values().all(Vec::is_empty), "every slice ends");
        (tracks, spans, messages)
    }

    /// Spans that touch (one ends as the next begins) and messages arrive read back as
    /// written: the ends come first at equal times, whatever order the spans were recorded in.
    #[test]
    fn spans_and_messages_read_back_as_written() {
        let events = vec![
            span(1, "recv", 500, 900),
            message(1, 0, 1, 600, Some(900)),
            span(1, "compute", 100, 500),
            span(0, "ssend", 600, 950),
            message(2, 1, 0, 950, None),
        ];
        let t = Trace::new("mpsim test", 2, events);
        let mut bytes = Vec::new();
        t.write_perfetto(&mut bytes).unwrap();
        let (tracks, mut spans, messages) = read_back(&bytes);
        assert_eq!(tracks, ["mpsim test", "rank 0", "rank 1"]);
        let key = |e: &TraceEvent| match *e {
            TraceEvent::Span { rank, start_ns, .. } => (rank, start_ns),
            TraceEvent::Message { .. } => unreachable!(),
        };
        spans.sort_by_key(key);
        assert_eq!(
            spans,
            [
                span(0, "ssend", 600, 950),
                span(1, "compute", 100, 500),
                span(1, "recv", 500, 900),
            ]
        );
        assert_eq!(
            messages,
            [
                message(1, 0, 1, 600, Some(900)),
                message(2, 1, 0, 950, None)
            ]
        );
    }

    /// Under a set of ranks, only those and the other ends of their messages have tracks.
    #[test]
    fn a_rank_set_gives_tracks_to_its_ranks_and_their_peers() {
        let events = vec![span(2, "recv", 0, 10), message(1, 7, 2, 1, Some(5))];
        let filter = TraceFilter {
            ranks: Some("2-3".parse().unwrap()),
            ..TraceFilter::default()
        };
        let t = Trace::new("mpsim test", 8, events).with_filter(filter);
        let mut bytes = Vec::new();
        t.write_perfetto(&mut bytes).unwrap();
        let (tracks, _, messages) = read_back(&bytes);
        assert_eq!(tracks, ["mpsim test", "rank 2", "rank 3", "rank 7"]);
        assert_eq!(messages, [message(1, 7, 2, 1, Some(5))]);
    }
}
