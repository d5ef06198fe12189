//! The registration table of one process (DRMA, `spec/bsplib.md` §1): every registration by
//! its place in the sequence of `push_reg` calls, its local area, and the sizes every process
//! registered for it.
//!
//! Why by place: the processes make the same sequence of `push_reg` and `pop_reg` calls (the
//! sync checks it), so the n-th push names the same registration everywhere, and a put or get
//! carries that number instead of an address. Why every process's size: a put or get beyond
//! the size its *target* registered is an error at the call (§2), so each process knows each
//! size. They are exchanged at the sync that activates the registration, and kept as one number
//! when every process registered the same size (the common case: memory O(1) per
//! registration instead of O(p)).
//!
//! A popped registration's local area stays readable through its handle (in C the memory was
//! the program's and outlives the registration): communication can no longer name it, and
//! its memory is freed when the process ends.

use mpsim_proto::error::BspErrorKind;

/// Registrations of one process.
#[derive(Default)]
pub(crate) struct Regs {
    /// By push number.
    table: Vec<Entry>,
    /// Push numbers pushed in this superstep, in order.
    pub pushed: Vec<u64>,
    /// Push numbers popped in this superstep, in order.
    pub popped: Vec<u64>,
}

/// One registration.
pub(crate) struct Entry {
    /// The local area, 16-byte aligned; `bytes` of it are the registration's.
    data: Vec<u128>,
    /// Its size here, in bytes.
    pub bytes: usize,
    /// Every process's size, known once active.
    sizes: Sizes,
    /// Usable for communication (pushed at an earlier sync).
    pub active: bool,
    /// Popped in this superstep (still usable until the sync).
    pub popping: bool,
    /// Popped at an earlier sync: only its local area is left.
    pub removed: bool,
}

/// Every process's size of one registration.
pub(crate) enum Sizes {
    /// Not known yet (pushed in this superstep).
    Unknown,
    /// The same on every process.
    Uniform(u64),
    /// By pid.
    PerPid(Box<[u64]>),
}

impl Regs {
    /// Pushes a registration of `bytes` bytes (zeroed); its push number.
    pub fn push(&mut self, bytes: usize) -> u64 {
        let words = bytes.div_ceil(16);
        let n = self.table.len() as u64;
        self.table.push(Entry {
            data: vec![0; words],
            bytes,
            sizes: Sizes::Unknown,
            active: false,
            popping: false,
            removed: false,
        });
        self.pushed.push(n);
        n
    }

    /// The registration `reg`, if it is registered.
    pub fn entry(&self, reg: u64) -> Result<&Entry, BspErrorKind> {
        self.area(reg)
            .filter(|e| !e.removed)
            .ok_or(BspErrorKind::NotRegistered { reg })
    }

    fn entry_mut(&mut self, reg: u64) -> Result<&mut Entry, BspErrorKind> {
        self.area_mut(reg)
            .filter(|e| !e.removed)
            .ok_or(BspErrorKind::NotRegistered { reg })
    }

    /// The registration `reg`, registered or popped.
    fn area(&self, reg: u64) -> Option<&Entry> {
        usize::try_from(reg).ok().and_then(|i| self.table.get(i))
    }

    fn area_mut(&mut self, reg: u64) -> Option<&mut Entry> {
        usize::try_from(reg)
            .ok()
            .and_then(|i| self.table.get_mut(i))
    }

    /// Marks `reg` popped in this superstep.
    pub fn pop(&mut self, reg: u64) -> Result<(), BspErrorKind> {
        let e = self.entry_mut(reg)?;
        if e.popping {
            return Err(BspErrorKind::NotRegistered { reg });
        }
        e.popping = true;
        self.popped.push(reg);
        Ok(())
    }

    /// Checks that bytes `offset..offset + n` of `reg` on process `target` may be named by
    /// communication now: registered, active, in range of `target`'s size.
    pub fn check_remote(
        &self,
        reg: u64,
        target: u32,
        offset: u64,
        n: u64,
    ) -> Result<(), BspErrorKind> {
        let e = self.entry(reg)?;
        if !e.active {
            return Err(BspErrorKind::NotActive { reg });
        }
        let size = e.size_of(target);
        if offset.checked_add(n).is_none_or(|end| end > size) {
            return Err(BspErrorKind::OutOfBounds {
                reg,
                target,
                offset,
                n,
                size,
            });
        }
        Ok(())
    }

    /// Checks that bytes `offset..offset + n` of the local area of `reg` exist (`me` is this
    /// process, which the error names).
    pub fn check_local(&self, reg: u64, me: u32, offset: u64, n: u64) -> Result<(), BspErrorKind> {
        let e = self.entry(reg)?;
        let size = e.bytes as u64;
        if offset.checked_add(n).is_none_or(|end| end > size) {
            return Err(BspErrorKind::OutOfBounds {
                reg,
                target: me,
                offset,
                n,
                size,
            });
        }
        Ok(())
    }

    /// The local area of `reg`, as bytes (popped or not).
    pub fn bytes(&self, reg: u64) -> Result<&[u8], BspErrorKind> {
        let e = self.area(reg).ok_or(BspErrorKind::NotRegistered { reg })?;
        Ok(&bytemuck::cast_slice::<u128, u8>(&e.data)[..e.bytes])
    }

    /// The local area of `reg`, as bytes to write (popped or not).
    pub fn bytes_mut(&mut self, reg: u64) -> Result<&mut [u8], BspErrorKind> {
        let e = self
            .area_mut(reg)
            .ok_or(BspErrorKind::NotRegistered { reg })?;
        let n = e.bytes;
        Ok(&mut bytemuck::cast_slice_mut::<u128, u8>(&mut e.data)[..n])
    }

    /// The sizes of this superstep's pushes here, in push order.
    pub fn pushed_sizes(&self) -> Vec<u64> {
        self.pushed
            .iter()
            .map(|&r| self.entry(r).map_or(0, |e| e.bytes as u64))
            .collect()
    }

    /// At sync: this superstep's pushes become active with `sizes` (one per push, in order),
    /// its pops are removed.
    pub fn apply(&mut self, sizes: Vec<Sizes>) {
        let pushed = std::mem::take(&mut self.pushed);
        for (reg, s) in pushed.into_iter().zip(sizes) {
            if let Ok(e) = self.entry_mut(reg) {
                e.sizes = s;
                e.active = true;
            }
        }
        for reg in std::mem::take(&mut self.popped) {
            if let Some(e) = self.area_mut(reg) {
                e.removed = true;
                e.sizes = Sizes::Unknown;
            }
        }
    }
}

impl Entry {
    /// The size process `pid` registered, in bytes (0 while unknown).
    pub fn size_of(&self, pid: u32) -> u64 {
        match &self.sizes {
            Sizes::Unknown => 0,
            Sizes::Uniform(n) => *n,
            Sizes::PerPid(v) => v.get(pid as usize).copied().unwrap_or(0),
        }
    }
}
