//! What a rank tells its proxy so that the run can check the program against MPI's rules, on
//! the side of the data: the type signature of what a call sends or expects, and a
//! collective's root and operation. It changes nothing the run sends or times: the proxies keep
//! it in a ledger of their own (`mpsim-proxy`'s `checks`).
//!
//! A call that carries a record appends it, encoded, to its payload and puts its length in
//! argument word [`ARG`] (0: no record); the proxy takes it off before executing the call,
//! queued or not (a queued call's payload carries its record the same way).

/// The argument word holding the length of the record at the end of the payload: no call uses
/// it for anything else (the most any call takes is six words, `Sendrecv`'s; `a[7]` is the
/// request id a rank chose for `Isend` and `Irecv`, [`crate::wire::RANK_IDS`]).
pub const ARG: usize = 6;

/// Signatures keep at most this many runs; a longer one is compared by its hash alone.
pub const RUNS_MAX: usize = 64;

/// The type signature of a piece of data: its primitive types in order, run-length encoded
/// (`2 x MPI_INT` and `1 x contiguous(2, MPI_INT)` are the same signature).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sig {
    /// Bytes of data.
    pub bytes: u64,
    /// Made of `MPI_BYTE` or `MPI_PACKED`, which match any signature (MPI 3.3.1).
    pub raw: bool,
    /// (primitive kind, how many), the first [`RUNS_MAX`] runs.
    pub runs: Vec<(u32, u64)>,
    /// Whether `runs` stops short.
    pub long: bool,
    /// A hash of all the runs.
    pub hash: u64,
    /// How the program wrote it (`4 x MPI_INT`), for reports.
    pub text: String,
}

impl Sig {
    /// Whether data of signature `self`, sent, may be received as `recv`: the same signature,
    /// or (`prefix`, a receive of a point-to-point message) the start of it; anything of the
    /// same length when either side is raw bytes. `None`: cannot tell (long signatures of
    /// different lengths).
    pub fn received_as(&self, recv: &Sig, prefix: bool) -> Option<bool> {
        // No data is the empty signature, however it was written (`0 x MPI_INT`, or one
        // element of a datatype of size 0).
        if self.bytes == 0 && (prefix || recv.bytes == 0) {
            return Some(true);
        }
        if self.raw || recv.raw {
            return Some(if prefix {
                self.bytes <= recv.bytes
            } else {
                self.bytes == recv.bytes
            });
        }
        if !prefix || self.bytes == recv.bytes {
            return Some(self.hash == recv.hash && self.bytes == recv.bytes);
        }
        if self.long || recv.long {
            return None;
        }
        // Every run of the message's but its last is a run of the receive's; the last one
        // may be the start of the receive's run.
        let Some((last, init)) = self.runs.split_last() else {
            return Some(true);
        };
        if init.len() >= recv.runs.len() {
            return Some(false);
        }
        let r = &recv.runs[init.len()];
        Some(init == &recv.runs[..init.len()] && last.0 == r.0 && last.1 <= r.1)
    }
}

/// A collective call as one rank made it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coll {
    /// The call (`MPI_Bcast`, `MPI_Ibcast`, `MPI_Start (MPI_Bcast_init)`).
    pub call: String,
    /// Its root, if it has one.
    pub root: Option<i64>,
    /// Its operation, if a reduction: a name to compare and show.
    pub op: Option<String>,
    /// What it sends to each rank.
    pub sends: Blocks,
    /// What it expects from each rank.
    pub expects: Blocks,
}

/// What a rank of a collective sends to, or expects from, each rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Blocks {
    /// Nothing.
    #[default]
    None,
    /// The same to or from every rank.
    All(Sig),
    /// Per rank, in rank order.
    Each(Vec<Sig>),
}

impl Blocks {
    /// What goes to or comes from rank `r`.
    pub fn get(&self, r: usize) -> Option<&Sig> {
        match self {
            Blocks::None => None,
            Blocks::All(s) => Some(s),
            Blocks::Each(v) => v.get(r),
        }
    }
}

/// A record, as it crosses the door.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A collective call.
    Coll(Coll),
    /// The signature of a point-to-point send's data, or of a receive's buffer.
    P2p(Sig),
}

struct Writer(Vec<u8>);

impl Writer {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn sig(&mut self, s: &Sig) {
        self.u64(s.bytes);
        self.u64(s.raw as u64 | (s.long as u64) << 1);
        self.u64(s.hash);
        self.u64(s.runs.len() as u64);
        for &(k, n) in &s.runs {
            self.u64(k as u64);
            self.u64(n);
        }
        self.str(&s.text);
    }
    fn blocks(&mut self, b: &Blocks) {
        match b {
            Blocks::None => self.u64(0),
            Blocks::All(s) => {
                self.u64(1);
                self.sig(s);
            }
            Blocks::Each(v) => {
                self.u64(2);
                self.u64(v.len() as u64);
                for s in v {
                    self.sig(s);
                }
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (h, t) = self.0.split_at_checked(8)?;
        self.0 = t;
        Some(u64::from_le_bytes(h.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.0.len()).then_some(n)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len()?;
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        // Valid UTF-8 (names the program wrote) checks fast; anything else is mended.
        Some(match std::str::from_utf8(h) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(h).into_owned(),
        })
    }
    fn sig(&mut self) -> Option<Sig> {
        let bytes = self.u64()?;
        let flags = self.u64()?;
        let hash = self.u64()?;
        let n = self.len()?;
        let mut runs = Vec::with_capacity(n);
        for _ in 0..n {
            runs.push((self.u64()? as u32, self.u64()?));
        }
        Some(Sig {
            bytes,
            raw: flags & 1 != 0,
            long: flags & 2 != 0,
            hash,
            runs,
            text: self.str()?,
        })
    }
    fn blocks(&mut self) -> Option<Blocks> {
        Some(match self.u64()? {
            0 => Blocks::None,
            1 => Blocks::All(self.sig()?),
            _ => {
                let n = self.len()?;
                (0..n)
                    .map(|_| self.sig())
                    .collect::<Option<Vec<_>>>()
                    .map(Blocks::Each)?
            }
        })
    }
}

impl Record {
    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        match self {
            Record::Coll(c) => {
                w.u64(1);
                w.str(&c.call);
                w.u64(c.root.is_some() as u64);
                w.u64(c.root.unwrap_or(0) as u64);
                w.u64(c.op.is_some() as u64);
                w.str(c.op.as_deref().unwrap_or(""));
                w.blocks(&c.sends);
                w.blocks(&c.expects);
            }
            Record::P2p(s) => {
                w.u64(2);
                w.sig(s);
            }
        }
        w.0
    }

    /// The record of `bytes` (`None` if they are not one).
    pub fn decode(bytes: &[u8]) -> Option<Record> {
        let mut r = Reader(bytes);
        Some(match r.u64()? {
            1 => {
                let call = r.str()?;
                let has_root = r.u64()? != 0;
                let root = r.u64()? as i64;
                let has_op = r.u64()? != 0;
                let op = r.str()?;
                Record::Coll(Coll {
                    call,
                    root: has_root.then_some(root),
                    op: has_op.then_some(op),
                    sends: r.blocks()?,
                    expects: r.blocks()?,
                })
            }
            2 => Record::P2p(r.sig()?),
            _ => return None,
        })
    }

    /// Takes the record off the end of a call's `payload` (`a[ARG]` bytes of it).
    pub fn take(a: &[i64], payload: &mut Vec<u8>) -> Option<Record> {
        let n = usize::try_from(*a.get(ARG)?).ok().filter(|&n| n > 0)?;
        let at = payload.len().checked_sub(n)?;
        let r = Record::decode(&payload[at..]);
        payload.truncate(at);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(n: u64) -> Sig {
        Sig {
            bytes: 4 * n,
            runs: vec![(0x209, n)],
            hash: n,
            ..Sig::default()
        }
    }

    /// A record survives its crossing; a message of 2 ints may be received into 5 ints but not
    /// into 1, and raw bytes match anything of a fitting length.
    #[test]
    fn records_round_trip_and_prefixes_match() {
        let c = Record::Coll(Coll {
            call: "MPI_Bcast".into(),
            root: Some(2),
            op: None,
            sends: Blocks::Each(vec![ints(1), ints(2)]),
            expects: Blocks::All(ints(3)),
        });
        assert_eq!(Record::decode(&c.encode()), Some(c));
        assert_eq!(ints(2).received_as(&ints(5), true), Some(true));
        assert_eq!(ints(2).received_as(&ints(1), true), Some(false));
        assert_eq!(ints(2).received_as(&ints(5), false), Some(false));
        let raw = Sig {
            bytes: 8,
            raw: true,
            ..Sig::default()
        };
        assert_eq!(ints(2).received_as(&raw, false), Some(true));
    }
}
