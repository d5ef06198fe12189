//! Datatypes, on the rank's side: what a C buffer of `count` elements of a datatype holds, and
//! packing it into the bytes that cross the door (and back).
//!
//! A datatype is a list of byte runs relative to an element's start (merged where they touch,
//! and a run repeated at a constant stride kept once with its count, so that a vector of a
//! billion blocks takes one entry, not a billion)
//! with its extent and lower bound, its size (bytes of data per element) and, when every
//! primitive in it is of one type, that type ([`Elem`]), which is what reductions need.
//! Derived datatypes never cross the door: the proxy sees packed bytes, as a real MPI's wire
//! does.

use mpsim_door::wire::Elem;

use crate::abi::Handle;

/// A datatype.
#[derive(Clone, Debug)]
pub struct Datatype {
    /// The byte runs of one element, in order.
    pub runs: Vec<Run>,
    /// Bytes of data per element.
    pub size: usize,
    /// Lower bound.
    pub lb: isize,
    /// Extent: the stride between elements.
    pub extent: isize,
    /// The primitive every part is made of, if one (reductions need it), and how many of
    /// them an element holds.
    pub elem: Option<(Elem, usize)>,
    /// Primitives per element (for `MPI_Get_elements`).
    pub primitives: usize,
    /// The sizes of one element's primitives in order, run-length encoded as (bytes, how
    /// many): what `MPI_Get_elements` counts in a partial element.
    pub prims: Vec<(usize, usize)>,
    /// The kinds of one element's primitives in order, run-length encoded as (kind, how
    /// many): its type signature (a kind is the handle of a predefined type standing for all
    /// of its C type, [`kind_of`]). Kept to [`PRIMS_MAX`] repetitions, as `prims`.
    pub kinds: Vec<(u32, usize)>,
    /// The strictest alignment of its primitives: a struct's extent is rounded up to it, as
    /// a C compiler pads a struct (and as MPI implementations do).
    pub align: usize,
    /// Committed (predefined ones always are).
    pub committed: bool,
    /// Predefined: cannot be freed.
    pub predefined: bool,
    /// Its name (`MPI_Type_get_name`).
    pub name: String,
}

impl Datatype {
    fn primitive(name: &str, size: usize, elem: Option<Elem>) -> Datatype {
        // A complex number or a Fortran pair aligns as its part; long double to 16.
        let part = name.contains("COMPLEX") || name.starts_with("MPI_2");
        let align = if part { size / 2 } else { size }.clamp(1, 16);
        Datatype {
            runs: vec![Run::one(0, size)],
            size,
            lb: 0,
            extent: size as isize,
            elem: elem.map(|e| (e, 1)),
            primitives: 1,
            prims: vec![(size, 1)],
            kinds: Vec::new(),
            align,
            committed: true,
            predefined: true,
            name: name.into(),
        }
    }

    /// A pair type `{value, int}` with the value's `size` and C layout (`extent`).
    fn pair(name: &str, value: usize, extent: usize, elem: Option<Elem>) -> Datatype {
        Datatype {
            runs: vec![Run::one(0, value), Run::one(value as isize, 4)],
            size: value + 4,
            lb: 0,
            extent: extent as isize,
            elem: elem.map(|e| (e, 1)),
            primitives: 2,
            kinds: Vec::new(),
            prims: if value == 4 {
                vec![(4, 2)]
            } else {
                vec![(value, 1), (4, 1)]
            },
            align: value.max(4),
            committed: true,
            predefined: true,
            name: name.into(),
        }
    }

    /// True when `count` elements are one run of bytes from the buffer's start.
    pub fn is_contiguous(&self) -> bool {
        self.lb == 0
            && self.extent == self.size as isize
            && (self.runs.is_empty() || self.runs[..] == [Run::one(0, self.size)])
    }

    /// How many primitives `bytes` of packed data hold (`MPI_Get_elements`): `None` when they
    /// end inside a primitive.
    pub fn elements_in(&self, bytes: usize) -> Option<usize> {
        if self.size == 0 {
            return Some(0);
        }
        let mut n = bytes / self.size * self.primitives;
        let mut rest = bytes % self.size;
        for &(size, k) in &self.prims {
            if rest == 0 {
                break;
            }
            let take = (rest / size.max(1)).min(k);
            n += take;
            rest -= take * size;
            if take < k {
                break;
            }
        }
        (rest == 0).then_some(n)
    }

    /// Bytes of packed data that hold `n` primitives (`MPI_Status_set_elements`): whole
    /// elements, then the first primitives of one more.
    pub fn bytes_of_elements(&self, n: usize) -> usize {
        if self.primitives == 0 {
            return 0;
        }
        let mut bytes = n / self.primitives * self.size;
        let mut rest = n % self.primitives;
        for &(size, k) in &self.prims {
            let take = rest.min(k);
            bytes += take * size;
            rest -= take;
            if rest == 0 {
                break;
            }
        }
        bytes
    }

    /// The type signature of `count` elements (for the run's checks, `mpsim_door::check`):
    /// its kinds repeated `count` times, runs that meet merged, so that `2 x MPI_INT` and
    /// `1 x contiguous(2, MPI_INT)` are one signature. Costs no more than packing them.
    pub fn sig(&self, count: usize) -> mpsim_door::check::Sig {
        use mpsim_door::check::{RUNS_MAX, Sig};
        let mut sig = Sig {
            bytes: (self.size * count) as u64,
            raw: self.kinds.iter().any(|k| RAW_KINDS.contains(&k.0)),
            text: format!(
                "{count} x {}",
                if self.name.is_empty() {
                    "a derived datatype"
                } else {
                    &self.name
                }
            ),
            ..Sig::default()
        };
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut mix = |k: u32, n: u64| {
            for v in [k as u64, n] {
                hash = (hash ^ v).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
            }
        };
        let mut last: Option<(u32, u64)> = None;
        let mut push = |k: u32, n: u64, runs: &mut Vec<(u32, u64)>, long: &mut bool| match &mut last
        {
            Some((lk, ln)) if *lk == k => *ln += n,
            _ => {
                if let Some((lk, ln)) = last.take() {
                    mix(lk, ln);
                    if runs.len() < RUNS_MAX {
                        runs.push((lk, ln));
                    } else {
                        *long = true;
                    }
                }
                last = Some((k, n));
            }
        };
        let (mut runs, mut long) = (Vec::new(), false);
        if let [(k, n)] = self.kinds[..] {
            push(k, (n * count) as u64, &mut runs, &mut long);
        } else {
            for _ in 0..count {
                for &(k, n) in &self.kinds {
                    push(k, n as u64, &mut runs, &mut long);
                }
            }
        }
        if let Some((k, n)) = last {
            mix(k, n);
            if runs.len() < RUNS_MAX {
                runs.push((k, n));
            } else {
                long = true;
            }
        }
        if self.name.is_empty() && !long && count > 0 {
            let parts: Vec<String> = runs
                .iter()
                .map(|&(k, n)| format!("{n} x {}", kind_name(k)))
                .collect();
            sig.text = format!("{} (= {})", sig.text, parts.join(", "));
        }
        sig.runs = runs;
        sig.long = long;
        sig.hash = hash;
        sig
    }

    /// Bytes of data in `count` elements (`None` on overflow).
    pub fn bytes(&self, count: usize) -> Option<usize> {
        self.size.checked_mul(count)
    }

    /// Whether `n` elements are one run of `n * size` bytes from the start.
    pub fn dense(&self) -> bool {
        self.lb == 0
            && self.extent == self.size as isize
            && (self.runs.is_empty() || self.runs[..] == [Run::one(0, self.size)])
    }

    /// The one run that `n` elements of this type make, repeated (`None` when they make more):
    /// a dense type's, or the elements' single run (repeated or not) laid end to end with the
    /// elements' stride.
    fn as_one_run(&self, disp: isize, n: usize) -> Option<Run> {
        if self.dense() {
            return Some(Run::one(disp, n.checked_mul(self.size)?));
        }
        match self.runs[..] {
            [r] if r.count == 1 => Some(Run {
                off: disp + r.off,
                len: r.len,
                count: n,
                stride: self.extent,
            }),
            [r] if r.stride.checked_mul(r.count as isize) == Some(self.extent) => Some(Run {
                off: disp + r.off,
                count: r.count.checked_mul(n)?,
                ..r
            }),
            _ => None,
        }
    }

    /// How many runs `n` elements of this type make at most (before runs that meet merge).
    pub fn runs_for(&self, n: usize) -> usize {
        match n {
            0 => 0,
            n if self.as_one_run(0, n).is_some() => 1,
            n => n.saturating_mul(self.runs.len()),
        }
    }

    /// Appends to `runs` the bytes of `n` elements of this type from `disp` (one run when
    /// the type is dense, however many elements), and gives their bounds (lower bound, upper
    /// bound: the first element's and the last's, as extents may be negative), `None` when
    /// `n` is 0.
    fn push_elements(&self, runs: &mut Vec<Run>, disp: isize, n: usize) -> Option<(isize, isize)> {
        if n == 0 {
            return None;
        }
        if let Some(r) = self.as_one_run(disp, n) {
            push_repeated(runs, r);
        } else if !self.runs.is_empty() {
            for i in 0..n {
                let base = disp + i as isize * self.extent;
                for &r in &self.runs {
                    push_repeated(
                        runs,
                        Run {
                            off: base + r.off,
                            ..r
                        },
                    );
                }
            }
        }
        let last = disp + (n as isize - 1) * self.extent;
        Some((
            disp.min(last) + self.lb,
            disp.max(last) + self.lb + self.extent,
        ))
    }

    /// A derived datatype made of `blocks` (displacement in bytes, count) of `old`; `None`
    /// when it would hold more than [`RUNS_LIMIT`] separate runs of bytes.
    pub fn derived(
        old: &Datatype,
        blocks: &[(isize, usize)],
        extent: Option<(isize, isize)>,
    ) -> Option<Datatype> {
        let needed = blocks
            .iter()
            .fold(0usize, |a, &(_, n)| a.saturating_add(old.runs_for(n)));
        if needed > RUNS_LIMIT {
            return None;
        }
        let mut runs: Vec<Run> = Vec::new();
        let (mut lo, mut hi) = (isize::MAX, isize::MIN);
        for &(disp, n) in blocks {
            if let Some((l, h)) = old.push_elements(&mut runs, disp, n) {
                (lo, hi) = (lo.min(l), hi.max(h));
            }
        }
        let count: usize = blocks.iter().map(|b| b.1).sum();
        if count == 0 {
            (lo, hi) = (0, 0);
        }
        let (lb, extent) = extent.unwrap_or((lo, hi - lo));
        let mut prims = Vec::new();
        let mut kinds = Vec::new();
        for _ in 0..count.min(PRIMS_MAX) {
            push_prims(&mut prims, &old.prims);
            push_prims(&mut kinds, &old.kinds);
        }
        Some(Datatype {
            runs,
            size: old.size.checked_mul(count)?,
            lb,
            extent,
            elem: old.elem.map(|(e, k)| (e, k * count)),
            primitives: old.primitives * count,
            prims,
            kinds,
            align: old.align,
            committed: false,
            predefined: false,
            name: String::new(),
        })
    }

    /// A vector: `count` blocks of `len` elements of `old`, each `stride` bytes after the one
    /// before; `None` when it would hold more than [`RUNS_LIMIT`] separate runs of bytes.
    /// Blocks that form one run repeated (the blocks of a dense type, or of a type of one run)
    /// are one entry of [`Datatype::runs`], however many there are.
    pub fn vector(old: &Datatype, count: usize, len: usize, stride: isize) -> Option<Datatype> {
        let block = Datatype::derived(old, &[(0, len)], None)?;
        // The bounds of the blocks: the first one's and the last one's (strides may be
        // negative); none when they hold no element.
        let bounds = if count == 0 || len == 0 {
            (0, 0)
        } else {
            let last = (count as isize - 1).checked_mul(stride)?;
            let lo = 0.min(last) + block.lb;
            (lo, 0.max(last) + block.lb + block.extent - lo)
        };
        // The block laid out `stride` apart, as a type of that extent, repeated.
        let spaced = Datatype {
            lb: 0,
            extent: stride,
            ..block
        };
        Datatype::derived(&spaced, &[(0, count)], Some(bounds))
    }

    /// A struct datatype: `blocks` (displacement, count, type); `None` when it would hold
    /// more than [`RUNS_LIMIT`] separate runs of bytes.
    pub fn structure(blocks: &[(isize, usize, &Datatype)]) -> Option<Datatype> {
        let needed = blocks
            .iter()
            .fold(0usize, |a, &(_, n, t)| a.saturating_add(t.runs_for(n)));
        if needed > RUNS_LIMIT {
            return None;
        }
        let mut runs = Vec::new();
        let (mut lo, mut hi) = (isize::MAX, isize::MIN);
        let mut size = 0;
        let mut primitives = 0;
        let mut elem: Option<Option<Elem>> = None;
        let mut elems = 0;
        let mut prims = Vec::new();
        let mut kinds = Vec::new();
        let mut align = 1;
        for &(disp, n, t) in blocks {
            for _ in 0..n.min(PRIMS_MAX) {
                push_prims(&mut prims, &t.prims);
                push_prims(&mut kinds, &t.kinds);
            }
            if n > 0 {
                align = align.max(t.align);
            }
            if let Some((l, h)) = t.push_elements(&mut runs, disp, n) {
                (lo, hi) = (lo.min(l), hi.max(h));
            }
            size += t.size * n;
            primitives += t.primitives * n;
            if n > 0 {
                let e = t.elem.map(|x| x.0);
                elem = Some(match elem {
                    None => e,
                    Some(prev) if prev == e => prev,
                    Some(_) => None,
                });
                elems += t.elem.map_or(0, |x| x.1) * n;
            }
        }
        if lo > hi {
            (lo, hi) = (0, 0);
        }
        // Padded to the strictest alignment of its parts, as C pads the struct it describes.
        let a = align as isize;
        let extent = (hi - lo + a - 1).div_euclid(a) * a;
        Some(Datatype {
            runs,
            size,
            lb: lo,
            extent,
            elem: elem.flatten().map(|e| (e, elems)),
            primitives,
            prims,
            kinds,
            align,
            committed: false,
            predefined: false,
            name: String::new(),
        })
    }

    /// Copies `count` elements at `buf` into `out`, packed.
    ///
    /// # Safety
    /// `buf` must hold `count` elements of this type.
    pub unsafe fn pack(&self, buf: *const u8, count: usize, out: &mut Vec<u8>) {
        out.reserve(self.size * count);
        for i in 0..count {
            let base = unsafe { buf.offset(i as isize * self.extent) };
            for r in &self.runs {
                for j in 0..r.count {
                    let at = unsafe { base.offset(r.off + j as isize * r.stride) };
                    out.extend_from_slice(unsafe { std::slice::from_raw_parts(at, r.len) });
                }
            }
        }
    }

    /// Writes packed `data` into the buffer `buf` of (at most) `count` elements: as many
    /// whole and partial elements as `data` holds.
    ///
    /// # Safety
    /// `buf` must hold `count` elements of this type, and `data` at most as many bytes.
    pub unsafe fn unpack(&self, data: &[u8], buf: *mut u8, count: usize) {
        let mut at = 0;
        'outer: for i in 0..count {
            let base = unsafe { buf.offset(i as isize * self.extent) };
            for r in &self.runs {
                for j in 0..r.count {
                    if at >= data.len() {
                        break 'outer;
                    }
                    let n = r.len.min(data.len() - at);
                    let to = unsafe { base.offset(r.off + j as isize * r.stride) };
                    unsafe { std::ptr::copy_nonoverlapping(data[at..].as_ptr(), to, n) };
                    at += n;
                }
            }
        }
    }
}

/// Repetitions of a part kept in [`Datatype::prims`]: beyond them a partial element's count
/// is approximate (only huge mixed-type blocks reach it).
const PRIMS_MAX: usize = 1 << 16;

/// Appends the run-length encoded primitive sizes (or kinds) `more` to `prims`.
fn push_prims<T: PartialEq + Copy>(prims: &mut Vec<(T, usize)>, more: &[(T, usize)]) {
    for &(size, k) in more {
        match prims.last_mut() {
            Some(last) if last.0 == size => last.1 += k,
            _ => prims.push((size, k)),
        }
    }
}

/// `count` runs of `len` bytes, the first at `off` (from an element's start), each `stride`
/// bytes after the one before: a vector's blocks in one entry however many there are. A
/// single run has `count` 1 (and `stride` its `len`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Where the first run starts.
    pub off: isize,
    /// Bytes in each run.
    pub len: usize,
    /// How many runs.
    pub count: usize,
    /// From one run's start to the next's.
    pub stride: isize,
}

impl Run {
    /// One run of `len` bytes at `off`.
    pub const fn one(off: isize, len: usize) -> Run {
        Run {
            off,
            len,
            count: 1,
            stride: len as isize,
        }
    }

    /// Where the last of the runs starts.
    fn last(&self) -> isize {
        self.off + (self.count as isize - 1) * self.stride
    }

    /// The lowest byte offset the runs cover and one past the highest.
    pub fn bounds(&self) -> (isize, isize) {
        let (first, last) = (self.off, self.last());
        (first.min(last), first.max(last) + self.len as isize)
    }
}

/// Appends `r` to `runs`: a single run that meets the last one lengthens it; runs of the
/// last one's length and stride that continue it add to its count.
fn push_repeated(runs: &mut Vec<Run>, r: Run) {
    if r.len == 0 || r.count == 0 {
        return;
    }
    if r.count > 1 && r.stride == r.len as isize {
        // Runs that meet each other: one run.
        return push_repeated(runs, Run::one(r.off, r.len * r.count));
    }
    if let Some(last) = runs.last_mut() {
        let end = last.last() + last.len as isize;
        if r.count == 1 && end == r.off {
            if last.count == 1 {
                last.len += r.len;
                last.stride = last.len as isize;
            } else {
                // It meets the last of the repeated runs: that one becomes a longer one.
                last.count -= 1;
                let lengthened = Run::one(last.last() + last.stride, last.len + r.len);
                runs.push(lengthened);
            }
            return;
        }
        if last.len == r.len {
            let stride = if last.count == 1 {
                r.off - last.off
            } else {
                last.stride
            };
            let same_stride = r.count == 1 || r.stride == stride;
            if same_stride && stride != 0 && last.off + last.count as isize * stride == r.off {
                last.stride = stride;
                last.count += r.count;
                return;
            }
        }
    }
    runs.push(r);
}

/// The most separate runs of bytes a derived datatype may hold here (16 bytes each in memory):
/// a larger one, such as a vector of a billion strided elements, is `MPI_ERR_TYPE` rather than
/// memory the host does not have.
pub const RUNS_LIMIT: usize = 1 << 24;

/// The predefined datatype of handle `h`, if it is one.
pub fn predefined(h: Handle) -> Option<Datatype> {
    let mut t = predefined_layout(h)?;
    t.kinds = vec![(kind_of(h, t.elem.map(|e| e.0)), 1)];
    Some(t)
}

/// The predefined handles lie in `0x200..0x300` (`abi.rs`).
const PREDEFINED: std::ops::Range<Handle> = 0x200..0x300;

/// The predefined datatype of handle `h`, shared: [`predefined`] of every predefined handle is
/// built once per process, at the first call that names a datatype, so that a call on a
/// predefined datatype costs a reference count, not the allocations of building one.
pub fn predefined_shared(h: Handle) -> Option<std::sync::Arc<Datatype>> {
    static TABLE: std::sync::OnceLock<Vec<Option<std::sync::Arc<Datatype>>>> =
        std::sync::OnceLock::new();
    if !PREDEFINED.contains(&h) {
        return None;
    }
    let table = TABLE.get_or_init(|| {
        PREDEFINED
            .map(|h| predefined(h).map(std::sync::Arc::new))
            .collect()
    });
    table[h - PREDEFINED.start].clone()
}

/// `MPI_BYTE` and `MPI_PACKED`: raw bytes, which match any type signature.
pub const RAW_KINDS: [u32; 2] = [0x247, 0x207];

/// The kind of the primitive of predefined handle `h`: the handle of one predefined type for
/// all that name the same C type (`MPI_INT`, `MPI_INT32_T`, `MPI_INTEGER` are one kind, as a
/// C program cannot tell them apart; `MPI_INT` and `MPI_FLOAT` are two).
fn kind_of(h: Handle, elem: Option<Elem>) -> u32 {
    use Elem::*;
    if RAW_KINDS.contains(&(h as u32)) {
        return h as u32;
    }
    match elem {
        Some(I8) => 0x243,
        Some(U8) => 0x245,
        Some(I16) => 0x208,
        Some(U16) => 0x20c,
        Some(I32) => 0x209,
        Some(U32) => 0x20d,
        Some(I64) => 0x20a,
        Some(U64) => 0x20e,
        Some(F32) => 0x210,
        Some(F64) => 0x214,
        _ => h as u32,
    }
}

/// The name of kind `k` (the predefined type it is the handle of).
pub fn kind_name(k: u32) -> String {
    predefined_layout(k as Handle).map_or_else(|| format!("type {k:#x}"), |t| t.name)
}

fn predefined_layout(h: Handle) -> Option<Datatype> {
    use Elem::*;
    let p = Datatype::primitive;
    Some(match h {
        0x201 => p("MPI_AINT", 8, Some(I64)),
        0x202 => p("MPI_COUNT", 8, Some(I64)),
        0x203 => p("MPI_OFFSET", 8, Some(I64)),
        0x207 => p("MPI_PACKED", 1, None),
        0x208 => p("MPI_SHORT", 2, Some(I16)),
        0x209 => p("MPI_INT", 4, Some(I32)),
        0x20a => p("MPI_LONG", 8, Some(I64)),
        // The standard's name: MPI_LONG_LONG is its synonym (one handle in the ABI).
        0x20b => p("MPI_LONG_LONG_INT", 8, Some(I64)),
        0x20c => p("MPI_UNSIGNED_SHORT", 2, Some(U16)),
        0x20d => p("MPI_UNSIGNED", 4, Some(U32)),
        0x20e => p("MPI_UNSIGNED_LONG", 8, Some(U64)),
        0x20f => p("MPI_UNSIGNED_LONG_LONG", 8, Some(U64)),
        0x210 => p("MPI_FLOAT", 4, Some(F32)),
        // The standard's name: MPI_C_FLOAT_COMPLEX is its synonym (one handle in the ABI).
        0x212 => p("MPI_C_COMPLEX", 8, None),
        0x213 => p("MPI_CXX_FLOAT_COMPLEX", 8, None),
        0x214 => p("MPI_DOUBLE", 8, Some(F64)),
        0x216 => p("MPI_C_DOUBLE_COMPLEX", 16, None),
        0x217 => p("MPI_CXX_DOUBLE_COMPLEX", 16, None),
        0x219 => p("MPI_INTEGER", 4, Some(I32)),
        0x218 => p("MPI_LOGICAL", 4, Some(I32)),
        0x21a => p("MPI_REAL", 4, Some(F32)),
        0x21b => p("MPI_COMPLEX", 8, None),
        0x21c => p("MPI_DOUBLE_PRECISION", 8, Some(F64)),
        0x21d => p("MPI_DOUBLE_COMPLEX", 16, None),
        0x220 => p("MPI_LONG_DOUBLE", 16, Some(LongDouble)),
        0x224 => p("MPI_C_LONG_DOUBLE_COMPLEX", 32, None),
        0x225 => p("MPI_CXX_LONG_DOUBLE_COMPLEX", 32, None),
        0x228 => Datatype::pair("MPI_FLOAT_INT", 4, 8, Some(FloatInt)),
        0x229 => Datatype::pair("MPI_DOUBLE_INT", 8, 16, Some(DoubleInt)),
        0x22a => Datatype::pair("MPI_LONG_INT", 8, 16, Some(LongInt)),
        0x22b => Datatype::pair("MPI_2INT", 4, 8, Some(TwoInt)),
        0x22c => Datatype {
            runs: vec![Run::one(0, 2), Run::one(4, 4)],
            prims: vec![(2, 1), (4, 1)],
            ..Datatype::pair("MPI_SHORT_INT", 2, 8, Some(ShortInt))
        },
        0x22d => Datatype {
            align: 16,
            ..Datatype::pair("MPI_LONG_DOUBLE_INT", 16, 32, Some(LongDoubleInt))
        },
        0x230 => p("MPI_2REAL", 8, None),
        0x231 => p("MPI_2DOUBLE_PRECISION", 16, None),
        0x232 => p("MPI_2INTEGER", 8, None),
        0x238 => p("MPI_C_BOOL", 1, Some(U8)),
        0x239 => p("MPI_CXX_BOOL", 1, Some(U8)),
        0x23c => p("MPI_WCHAR", 4, Some(I32)),
        0x240 => p("MPI_INT8_T", 1, Some(I8)),
        0x241 => p("MPI_UINT8_T", 1, Some(U8)),
        0x243 => p("MPI_CHAR", 1, Some(I8)),
        0x244 => p("MPI_SIGNED_CHAR", 1, Some(I8)),
        0x245 => p("MPI_UNSIGNED_CHAR", 1, Some(U8)),
        0x247 => p("MPI_BYTE", 1, Some(U8)),
        0x248 => p("MPI_INT16_T", 2, Some(I16)),
        0x249 => p("MPI_UINT16_T", 2, Some(U16)),
        0x250 => p("MPI_INT32_T", 4, Some(I32)),
        0x251 => p("MPI_UINT32_T", 4, Some(U32)),
        0x258 => p("MPI_INT64_T", 8, Some(I64)),
        0x259 => p("MPI_UINT64_T", 8, Some(U64)),
        0x2c1 => p("MPI_INTEGER1", 1, Some(I8)),
        0x21e => p("MPI_CHARACTER", 1, Some(I8)),
        0x2c9 => p("MPI_INTEGER2", 2, Some(I16)),
        0x2d1 => p("MPI_INTEGER4", 4, Some(I32)),
        0x2d2 => p("MPI_REAL4", 4, Some(F32)),
        0x2d9 => p("MPI_INTEGER8", 8, Some(I64)),
        0x2da => p("MPI_REAL8", 8, Some(F64)),
        0x2db => p("MPI_COMPLEX8", 8, None),
        0x2e1 => p("MPI_INTEGER16", 16, None),
        0x2e2 => p("MPI_REAL16", 16, None),
        0x2e3 => p("MPI_COMPLEX16", 16, None),
        0x2eb => p("MPI_COMPLEX32", 32, None),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared table gives, for every handle, the datatype `predefined` builds (the same
    /// name, layout and signature kinds), and nothing for a handle that is not one.
    #[test]
    fn predefined_shared_is_predefined() {
        let mut found = 0;
        for h in 0..0x400 {
            match (predefined(h), predefined_shared(h)) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    found += 1;
                    assert_eq!(
                        (&a.name, &a.runs, a.size, a.extent, &a.kinds, &a.prims),
                        (&b.name, &b.runs, b.size, b.extent, &b.kinds, &b.prims),
                        "{h:#x}"
                    );
                    assert!(std::sync::Arc::ptr_eq(
                        &b,
                        &predefined_shared(h).expect("again")
                    ));
                }
                (a, b) => panic!(
                    "{h:#x}: {:?} vs {:?}",
                    a.map(|t| t.name),
                    b.map(|t| t.name.clone())
                ),
            }
        }
        assert!(found > 50, "{found}");
    }

    /// A vector of 3 blocks of 2 ints, stride 4: runs, size, extent, and a pack/unpack
    /// round trip that leaves the gaps alone.
    #[test]
    fn vector_packs_its_blocks() {
        let int = predefined(0x209).unwrap();
        let blocks: Vec<_> = (0..3).map(|i| (i * 16, 2)).collect();
        let v = Datatype::derived(&int, &blocks, None).expect("small");
        assert_eq!(
            v.runs,
            [Run {
                off: 0,
                len: 8,
                count: 3,
                stride: 16
            }]
        );
        assert_eq!((v.size, v.extent), (24, 40));
        let src: Vec<i32> = (0..10).collect();
        let mut packed = Vec::new();
        unsafe { v.pack(src.as_ptr().cast(), 1, &mut packed) };
        let ints: Vec<i32> = packed
            .chunks(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(ints, [0, 1, 4, 5, 8, 9]);
        let mut dst = vec![-1i32; 10];
        unsafe { v.unpack(&packed, dst.as_mut_ptr().cast(), 1) };
        assert_eq!(dst, [0, 1, -1, -1, 4, 5, -1, -1, 8, 9]);
    }

    /// A struct {int; char} has the extent of its C struct (8), not 5, and a struct
    /// {char; short; int} received in part counts its primitives one by one.
    #[test]
    fn struct_extent_is_padded_and_partial_elements_count_primitives() {
        let (int, ch, short) = (
            predefined(0x209).unwrap(),
            predefined(0x243).unwrap(),
            predefined(0x208).unwrap(),
        );
        let s = Datatype::structure(&[(0, 1, &int), (4, 1, &ch)]).expect("small");
        assert_eq!((s.size, s.extent, s.align), (5, 8, 4));
        let t = Datatype::structure(&[(0, 1, &ch), (2, 1, &short), (4, 1, &int)]).expect("small");
        assert_eq!(t.elements_in(7), Some(3));
        assert_eq!(t.elements_in(3), Some(2));
        assert_eq!(t.elements_in(2), None);
        assert_eq!(t.elements_in(14), Some(6));
        let v = Datatype::derived(&t, &[(0, 3)], None).expect("small");
        assert_eq!(v.elements_in(7 + 3), Some(5));
        let ldi = predefined(0x22d).unwrap();
        assert_eq!((ldi.size, ldi.extent), (20, 32));
    }

    /// Runs that continue a repeated run add to its count; one that meets the last of them
    /// lengthens that one; runs that meet become one; negative strides keep their order.
    #[test]
    fn repeated_runs_merge_only_where_the_bytes_continue() {
        let rep = |off, len, count, stride| Run {
            off,
            len,
            count,
            stride,
        };
        let mut runs = Vec::new();
        for off in [0, 8, 16] {
            push_repeated(&mut runs, Run::one(off, 4));
        }
        assert_eq!(runs, [rep(0, 4, 3, 8)]);
        push_repeated(&mut runs, Run::one(20, 4));
        assert_eq!(runs, [rep(0, 4, 2, 8), Run::one(16, 8)]);
        let mut runs = Vec::new();
        push_repeated(&mut runs, rep(0, 4, 5, 4));
        assert_eq!(runs, [Run::one(0, 20)]);
        let mut runs = Vec::new();
        push_repeated(&mut runs, Run::one(8, 4));
        push_repeated(&mut runs, Run::one(0, 4));
        assert_eq!(runs, [rep(8, 4, 2, -8)]);
        assert_eq!(runs[0].bounds(), (0, 12));
        // The same bytes twice are two runs, not a repetition of stride 0.
        push_repeated(&mut runs, Run::one(0, 4));
        assert_eq!(runs.len(), 2);
        // A vector of no data is empty, however many blocks.
        let int = predefined(0x209).unwrap();
        let none = Datatype::vector(&int, i32::MAX as usize, 0, 8).expect("no runs");
        assert!(none.runs.is_empty() && none.size == 0 && none.extent == 0);
    }

    /// MPI_DOUBLE_INT packs to 12 bytes (the proxy's packed pair) from its 16-byte layout.
    #[test]
    fn pair_types_pack_without_padding() {
        let t = predefined(0x229).unwrap();
        assert_eq!((t.size, t.extent, t.is_contiguous()), (12, 16, false));
    }
}
