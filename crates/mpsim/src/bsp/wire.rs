//! What one process sends another at a sync: a *bundle*, the superstep's puts, get requests
//! and BSMP messages for that process, in the order they were issued, as bytes.
//!
//! Why one message per destination: the three-phase sync (`sync.rs`) then needs one message
//! (plus its header) per pair of processes that communicated, whatever the number of
//! operations, and the receiver applies them in issue order by reading the bundle front to
//! back. The layout is private to this module: little-endian `u64` fields after a one-byte
//! kind.
//!
//! ```text
//! put   1 | reg | offset | n | n bytes
//! get   2 | reg | offset | n                (the reply carries the n bytes, in get order)
//! send  3 | tag length | n | tag | n bytes
//! ```

use mpsim_proto::error::{Error, Result};

const PUT: u8 = 1;
const GET: u8 = 2;
const SEND: u8 = 3;

/// One operation of a bundle, borrowing its bytes from the bundle.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Op<'a> {
    /// Write `data` at byte `offset` of registration `reg`.
    Put {
        reg: u64,
        offset: u64,
        data: &'a [u8],
    },
    /// Read `n` bytes at byte `offset` of registration `reg` for the sender.
    Get { reg: u64, offset: u64, n: u64 },
    /// A BSMP message.
    Send { tag: &'a [u8], payload: &'a [u8] },
}

/// The operations of one superstep from one process to one process, and what they charge.
#[derive(Debug, Default)]
pub(crate) struct Bundle {
    /// The encoded operations.
    pub bytes: Vec<u8>,
    /// Bytes the sender's puts and sends carry to the receiver (tags included).
    pub carried: u64,
    /// Bytes the sender's gets ask the receiver for (the reply's length).
    pub asked: u64,
    /// Puts and sends in it.
    pub carried_ops: u64,
    /// Gets in it.
    pub asked_ops: u64,
}

impl Bundle {
    fn field(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a put of `data` at `offset` of `reg`.
    pub fn put(&mut self, reg: u64, offset: u64, data: &[u8]) {
        self.bytes.push(PUT);
        self.field(reg);
        self.field(offset);
        self.field(data.len() as u64);
        self.bytes.extend_from_slice(data);
        self.carried += data.len() as u64;
        self.carried_ops += 1;
    }

    /// Appends a get of `n` bytes at `offset` of `reg`.
    pub fn get(&mut self, reg: u64, offset: u64, n: u64) {
        self.bytes.push(GET);
        self.field(reg);
        self.field(offset);
        self.field(n);
        self.asked += n;
        self.asked_ops += 1;
    }

    /// Appends a message with `tag` and `payload`.
    pub fn send(&mut self, tag: &[u8], payload: &[u8]) {
        self.bytes.push(SEND);
        self.field(tag.len() as u64);
        self.field(payload.len() as u64);
        self.bytes.extend_from_slice(tag);
        self.bytes.extend_from_slice(payload);
        self.carried += (tag.len() + payload.len()) as u64;
        self.carried_ops += 1;
    }
}

/// The operations of an encoded bundle, in order; an `Internal` error for bytes that are not
/// one (a bug: bundles are only made by [`Bundle`]).
pub(crate) fn ops(mut bytes: &[u8]) -> impl Iterator<Item = Result<Op<'_>>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let op = next(&mut bytes);
        if op.is_err() {
            bytes = &[];
        }
        Some(op)
    })
}

fn next<'a>(bytes: &mut &'a [u8]) -> Result<Op<'a>> {
    let kind = take(bytes, 1)?[0];
    let mut field = || -> Result<u64> {
        let b = take(bytes, 8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| malformed())?))
    };
    match kind {
        PUT => {
            let (reg, offset, n) = (field()?, field()?, field()?);
            let data = take(bytes, n)?;
            Ok(Op::Put { reg, offset, data })
        }
        GET => {
            let (reg, offset, n) = (field()?, field()?, field()?);
            Ok(Op::Get { reg, offset, n })
        }
        SEND => {
            let (t, n) = (field()?, field()?);
            let tag = take(bytes, t)?;
            let payload = take(bytes, n)?;
            Ok(Op::Send { tag, payload })
        }
        _ => Err(malformed()),
    }
}

fn take<'a>(bytes: &mut &'a [u8], n: impl TryInto<usize>) -> Result<&'a [u8]> {
    let n = n.try_into().map_err(|_| malformed())?;
    if bytes.len() < n {
        return Err(malformed());
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

fn malformed() -> Error {
    Error::Internal {
        what: "bsp: a malformed bundle (a bug in mpsim::bsp)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_reads_back_in_issue_order() {
        let mut b = Bundle::default();
        b.put(2, 8, &[1, 2, 3]);
        b.get(0, 4, 16);
        b.send(&[9], &[]);
        b.send(&[], &[7, 7]);
        let got: Vec<_> = ops(&b.bytes).collect::<Result<_>>().unwrap();
        assert_eq!(
            got,
            [
                Op::Put {
                    reg: 2,
                    offset: 8,
                    data: &[1, 2, 3]
                },
                Op::Get {
                    reg: 0,
                    offset: 4,
                    n: 16
                },
                Op::Send {
                    tag: &[9],
                    payload: &[]
                },
                Op::Send {
                    tag: &[],
                    payload: &[7, 7]
                },
            ]
        );
        assert_eq!(
            (b.carried, b.asked, b.carried_ops, b.asked_ops),
            (6, 16, 3, 1)
        );
    }

    #[test]
    fn a_cut_bundle_is_an_internal_error() {
        let mut b = Bundle::default();
        b.put(0, 0, &[1, 2, 3]);
        let cut = &b.bytes[..b.bytes.len() - 1];
        assert!(matches!(ops(cut).next(), Some(Err(Error::Internal { .. }))));
    }
}
