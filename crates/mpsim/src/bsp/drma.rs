//! DRMA, direct remote memory access (`spec/bsplib.md` §1): registrations ([`Reg`]) and
//! `put`, `get` and their `hp` forms, each recorded at the call and carried out at the sync.
//!
//! Why handles instead of addresses: a registration is the runtime's own zeroed buffer of
//! `len` elements of a plain-data type, named by a [`Reg<T>`] that carries its place in the
//! sequence of `push_reg` calls (its identity on every process). The program reads and writes
//! it through [`Ctx::local`] and [`Ctx::local_mut`]; offsets and lengths are in elements and
//! checked in bytes. C's address stacking (one address registered twice resolves to the newer
//! registration) has no counterpart: two pushes give two handles.
//!
//! `put` copies its source at the call; `get` reads its source at the sync, before any put of
//! the superstep lands, and its result is written at the sync, into a registration
//! ([`Ctx::get_into`]) or kept for [`Ctx::take`] ([`Ctx::get`]). The `hp` forms are the same
//! calls: the specification lets an unbuffered transfer happen any time up to the sync, and
//! doing it at the sync is one such time (MulticoreBSP's "fake hp").

use std::marker::PhantomData;

use bytemuck::Pod;
use mpsim_proto::error::{BspErrorKind, Error, Result};

use super::ctx::{Ctx, GetDest, GetRec};

/// A registration: an area of `len` elements of `T` on every process (each its own length),
/// usable for communication from the superstep after the one that pushed it.
///
/// A handle, `Copy`: it names the registration by its place in the sequence of `push_reg`
/// calls, so the same handle value names the same registration on every process. Using it
/// after [`Ctx::pop_reg`] took effect is [`BspErrorKind::NotRegistered`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Reg<T> {
    index: u64,
    len: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Reg<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Reg<T> {}

impl<T> Reg<T> {
    /// Its place in the sequence of `push_reg` calls (0 for the first), which errors name.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Its length here, in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements here (a process taking part without memory, BSPlib's
    /// `push_reg(NULL, 0)`).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The result of a [`Ctx::get`], delivered by the sync that ends its superstep: read it with
/// [`Ctx::take`].
#[derive(Debug)]
#[must_use = "a get's result is read with Ctx::take after the sync"]
pub struct Pending<T> {
    id: u64,
    issued: u64,
    len: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Pending<T> {
    /// Its length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

const PUT: &str = "bsp_put";
const GET: &str = "bsp_get";
const PUSH: &str = "bsp_push_reg";
const POP: &str = "bsp_pop_reg";

impl Ctx {
    /// Registers a zeroed area of `len` elements of `T` (`bsp_push_reg`); collective: every
    /// process makes the same sequence of `push_reg` and `pop_reg` calls (the sync that ends
    /// the superstep checks it), each with its own `len` (0 takes part without memory). Its
    /// local area can be used at once; communication may name it from the next superstep on.
    pub fn push_reg<T: Pod>(&mut self, len: usize) -> Result<Reg<T>> {
        self.check_poisoned(PUSH)?;
        if align_of::<T>() > 16 {
            return Err(Error::Unsupported {
                what: format!(
                    "{PUSH}: a registration of a type aligned to {} bytes (at most 16)",
                    align_of::<T>()
                ),
            });
        }
        let Some(bytes) = len.checked_mul(size_of::<T>()) else {
            return Err(Error::InvalidArgument {
                what: format!("{PUSH}: {len} elements of {} bytes", size_of::<T>()),
            });
        };
        let index = self.core_mut().regs.push(bytes);
        Ok(Reg {
            index,
            len,
            _t: PhantomData,
        })
    }

    /// Removes a registration at the end of the superstep (`bsp_pop_reg`); collective: every
    /// process pops the same registration in the same place of its sequence. Communication in
    /// this superstep may still name it.
    pub fn pop_reg<T>(&mut self, reg: Reg<T>) -> Result<()> {
        self.check_poisoned(POP)?;
        let r = self.core_mut().regs.pop(reg.index);
        r.map_err(|kind| self.error(POP, kind))
    }

    /// The local area of `reg`: its values as of now (puts and gets into it land at the sync).
    pub fn local<T: Pod>(&self, reg: &Reg<T>) -> Result<&[T]> {
        let bytes = self.core().regs.bytes(reg.index);
        let bytes = bytes.map_err(|kind| self.error("bsp_local", kind))?;
        let bytes = bytes.get(..reg.len * size_of::<T>());
        bytes
            .map(bytemuck::cast_slice)
            .ok_or_else(|| self.error("bsp_local", BspErrorKind::NotRegistered { reg: reg.index }))
    }

    /// The local area of `reg`, to write.
    pub fn local_mut<T: Pod>(&mut self, reg: &Reg<T>) -> Result<&mut [T]> {
        let core = self.core_mut();
        let n = reg.len * size_of::<T>();
        let kind = match core.regs.bytes(reg.index) {
            Ok(bytes) if bytes.len() >= n => None,
            Ok(_) => Some(BspErrorKind::NotRegistered { reg: reg.index }),
            Err(kind) => Some(kind),
        };
        if let Some(kind) = kind {
            return Err(core.error("bsp_local_mut", kind));
        }
        let bytes = core
            .regs
            .bytes_mut(reg.index)
            .map_err(|_| unreachable_reg())?;
        Ok(bytemuck::cast_slice_mut(&mut bytes[..n]))
    }

    /// Writes `src` into elements `offset..offset + src.len()` of `dst` on process `pid` at
    /// the sync (`bsp_put`). `src` is copied now. Overlapping puts land in the order: source
    /// pid ascending, then issue order, so the last wins; a put lands after every get of the
    /// superstep read its source. An empty `src` does nothing (the pid is still checked).
    pub fn put<T: Pod>(&self, pid: u32, dst: &Reg<T>, offset: usize, src: &[T]) -> Result<()> {
        self.put_as(PUT, pid, dst, offset, src)
    }

    /// [`Ctx::put`] (`bsp_hpput`): carried out at the sync, which the unbuffered form allows.
    pub fn hpput<T: Pod>(&self, pid: u32, dst: &Reg<T>, offset: usize, src: &[T]) -> Result<()> {
        self.put_as("bsp_hpput", pid, dst, offset, src)
    }

    fn put_as<T: Pod>(
        &self,
        op: &'static str,
        pid: u32,
        dst: &Reg<T>,
        offset: usize,
        src: &[T],
    ) -> Result<()> {
        self.check_poisoned(op)?;
        self.check_pid(op, pid)?;
        if src.is_empty() {
            return Ok(());
        }
        let (off, n) = byte_range::<T>(offset, src.len());
        let core = self.core();
        core.regs
            .check_remote(dst.index, pid, off, n)
            .map_err(|kind| self.error(op, kind))?;
        let mut out = core.out.borrow_mut();
        let bundle = out.bundles.entry(pid).or_default();
        bundle.put(dst.index, off, bytemuck::cast_slice(src));
        Ok(())
    }

    /// Reads `len` elements at `offset` of `src` on process `pid` (`bsp_get`): the values
    /// there at the sync, before any put of this superstep lands. The result is delivered by
    /// the sync; read it then with [`Ctx::take`].
    pub fn get<T: Pod>(
        &self,
        pid: u32,
        src: &Reg<T>,
        offset: usize,
        len: usize,
    ) -> Result<Pending<T>> {
        self.get_as(GET, pid, src, offset, len, None)
            .map(|id| Pending {
                id,
                issued: self.superstep(),
                len,
                _t: PhantomData,
            })
    }

    /// [`Ctx::get`] (`bsp_hpget`).
    pub fn hpget<T: Pod>(
        &self,
        pid: u32,
        src: &Reg<T>,
        offset: usize,
        len: usize,
    ) -> Result<Pending<T>> {
        self.get_as("bsp_hpget", pid, src, offset, len, None)
            .map(|id| Pending {
                id,
                issued: self.superstep(),
                len,
                _t: PhantomData,
            })
    }

    /// Reads `len` elements at `offset` of `src` on process `pid` into elements
    /// `dst_offset..` of this process's registration `dst` (`bsp_get` into local memory):
    /// read and written at the sync, results in issue order, before the puts of the
    /// superstep land (so a put into the same bytes wins).
    pub fn get_into<T: Pod>(
        &self,
        pid: u32,
        src: &Reg<T>,
        offset: usize,
        dst: &Reg<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        self.get_as(GET, pid, src, offset, len, Some((dst, dst_offset)))
            .map(drop)
    }

    /// [`Ctx::get_into`] (`bsp_hpget`).
    pub fn hpget_into<T: Pod>(
        &self,
        pid: u32,
        src: &Reg<T>,
        offset: usize,
        dst: &Reg<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        self.get_as("bsp_hpget", pid, src, offset, len, Some((dst, dst_offset)))
            .map(drop)
    }

    /// Records a get; its number.
    fn get_as<T: Pod>(
        &self,
        op: &'static str,
        pid: u32,
        src: &Reg<T>,
        offset: usize,
        len: usize,
        dst: Option<(&Reg<T>, usize)>,
    ) -> Result<u64> {
        self.check_poisoned(op)?;
        self.check_pid(op, pid)?;
        let core = self.core();
        let id = core.next_get.get();
        core.next_get.set(id + 1);
        if len == 0 {
            return Ok(id);
        }
        let (off, n) = byte_range::<T>(offset, len);
        core.regs
            .check_remote(src.index, pid, off, n)
            .map_err(|kind| self.error(op, kind))?;
        let dest = match dst {
            None => GetDest::Pending(id),
            Some((dst, dst_offset)) => {
                let (doff, _) = byte_range::<T>(dst_offset, len);
                core.regs
                    .check_local(dst.index, core.pid, doff, n)
                    .map_err(|kind| self.error(op, kind))?;
                GetDest::Reg {
                    reg: dst.index,
                    offset: doff,
                }
            }
        };
        let mut out = core.out.borrow_mut();
        let bundle = out.bundles.entry(pid).or_default();
        let reply_offset = bundle.asked;
        bundle.get(src.index, off, n);
        out.gets.push(GetRec {
            target: pid,
            reply_offset,
            n,
            dest,
        });
        Ok(id)
    }

    /// The result of a [`Ctx::get`] whose superstep has ended.
    /// [`BspErrorKind::NotDelivered`] before that sync.
    pub fn take<T: Pod>(&mut self, pending: Pending<T>) -> Result<Vec<T>> {
        let core = self.core_mut();
        if pending.issued >= core.superstep {
            let kind = BspErrorKind::NotDelivered {
                issued: pending.issued,
            };
            return Err(core.error("bsp_take", kind));
        }
        let bytes = core.results.remove(&pending.id).unwrap_or_default();
        let mut values = vec![T::zeroed(); bytes.len() / size_of::<T>().max(1)];
        bytemuck::cast_slice_mut::<T, u8>(&mut values).copy_from_slice(&bytes);
        Ok(values)
    }

    /// `InvalidPid` unless `pid` names a process.
    pub(crate) fn check_pid(&self, op: &'static str, pid: u32) -> Result<()> {
        let nprocs = self.nprocs();
        if pid < nprocs {
            Ok(())
        } else {
            let target = if pid == u32::MAX { -1 } else { i64::from(pid) };
            Err(self.error(op, BspErrorKind::InvalidPid { target, nprocs }))
        }
    }
}

/// A registration found a moment ago and gone (a bug).
fn unreachable_reg() -> Error {
    Error::Internal {
        what: "bsp: a registration vanished between two looks (a bug in mpsim::bsp)".into(),
    }
}

/// Elements `offset..offset + len` of `T` as a byte offset and length (saturating: a range
/// past `u64` is out of any registration's bounds).
fn byte_range<T>(offset: usize, len: usize) -> (u64, u64) {
    let size = size_of::<T>() as u64;
    (
        (offset as u64).saturating_mul(size),
        (len as u64).saturating_mul(size),
    )
}
