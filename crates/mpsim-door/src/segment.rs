//! The shared-memory segment of a C run: a header, then one slot per rank.
//!
//! `mpsim run` creates it as an anonymous `memfd` and passes its descriptor to the program
//! (the only process it starts); the C library maps it in its constructor, forks one process
//! per rank, and each rank talks through its own slot. A `memfd` has no name: when the last
//! process that maps it ends, the memory is gone, whatever way the run ended.
//!
//! Layout (all offsets fixed at creation): [`Header`] in the first page, then `ranks` slots of
//! `slot_bytes` each, page aligned. A slot is a [`SlotControl`] (the futex word whose value
//! says whose turn it is, and what the zygote learnt of the rank's end) followed by its data
//! area. Pages are only touched as used, so a large slot costs address space, not memory.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// "mpsimdr1": the segment's first word.
pub const MAGIC: u64 = 0x3172_646d_6973_706d;
/// Bytes of the header page.
pub const HEADER_BYTES: usize = 4096;
/// Bytes of a slot's control block, before its data.
pub const CONTROL_BYTES: usize = 128;

/// The segment's header.
#[repr(C)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: AtomicU64,
    /// Ranks, one slot each.
    pub ranks: AtomicU32,
    /// Set to 1 by the program's process once it has forked the ranks (it is then their
    /// zygote: it waits for them and records how each ended).
    pub forked: AtomicU32,
    /// Bytes of each slot, control block included.
    pub slot_bytes: AtomicU64,
    /// The zygote's pid.
    pub zygote_pid: AtomicI32,
    /// 1 when the mpsim process and every rank run on one CPU (a simulated run: one process
    /// runs at a time), set before the program starts: waiting sides then sleep at once
    /// instead of spinning ([`crate::channel::Channel::on_one_cpu`]).
    pub one_cpu: AtomicU32,
}

/// How a rank's process ended, as the zygote saw it ([`SlotControl::end`]).
pub mod end {
    /// Still running (or not started).
    pub const RUNNING: u32 = 0;
    /// Exited; the code is in [`super::SlotControl::end_value`].
    pub const EXITED: u32 = 1;
    /// Killed by a signal, in [`super::SlotControl::end_value`].
    pub const SIGNALED: u32 = 2;
}

/// Whose turn it is on a slot ([`SlotControl::turn`]).
pub mod turn {
    /// The rank may run and write; the proxy waits.
    pub const RANK: u32 = 0;
    /// The proxy reads and answers; the rank waits.
    pub const PROXY: u32 = 1;
    /// The rank's process has ended (set by the zygote); nothing more will come.
    pub const DEAD: u32 = 2;
}

/// A slot's control block.
#[repr(C)]
pub struct SlotControl {
    /// The futex word: [`turn::RANK`], [`turn::PROXY`] or [`turn::DEAD`].
    pub turn: AtomicU32,
    /// Bytes of the current chunk in the data area.
    pub len: AtomicU32,
    /// 1 when more chunks of the same message follow this one.
    pub more: AtomicU32,
    /// The rank process's pid, written by the rank.
    pub pid: AtomicI32,
    /// How the process ended: [`end::RUNNING`], [`end::EXITED`], [`end::SIGNALED`].
    pub end: AtomicU32,
    /// The exit code or the signal.
    pub end_value: AtomicI32,
    /// 1 once the rank called `MPI_Finalize` and the proxy answered.
    pub finalized: AtomicU32,
    /// Bytes at the start of the data area taken by calls the rank queued (calls that need no
    /// answer; [`crate::channel::Channel::queue`]); the current message's head follows them.
    pub queued: AtomicU32,
}

/// A mapped segment. Cloning is not offered: each process maps it once and keeps it for its
/// life ([`Segment::leak`]).
pub struct Segment {
    base: NonNull<u8>,
    bytes: usize,
    fd: i32,
}

// The segment is plain shared memory accessed through atomics and the turn protocol.
unsafe impl Send for Segment {}
unsafe impl Sync for Segment {}

fn os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl Segment {
    /// Total bytes of a segment for `ranks` slots of `slot_bytes`.
    pub fn size_for(ranks: u32, slot_bytes: usize) -> Option<usize> {
        (ranks as usize)
            .checked_mul(slot_bytes)?
            .checked_add(HEADER_BYTES)
    }

    /// Creates a segment (a `memfd`, inheritable by children: no close-on-exec) for `ranks`
    /// ranks whose slots carry `slot_bytes` each, control included (a multiple of the page).
    pub fn create(ranks: u32, slot_bytes: usize) -> io::Result<Segment> {
        assert!(slot_bytes > CONTROL_BYTES && slot_bytes.is_multiple_of(4096));
        let bytes = Segment::size_for(ranks, slot_bytes)
            .ok_or_else(|| io::Error::other("the segment's size overflows"))?;
        let name = c"mpsim-door";
        // SAFETY: a valid C string; flags 0 leave the descriptor inheritable.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
        if fd < 0 {
            return Err(os_error("memfd_create"));
        }
        // SAFETY: fd is ours.
        if unsafe { libc::ftruncate(fd, bytes as libc::off_t) } != 0 {
            let e = os_error("ftruncate of the shared segment");
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let segment = Segment::map(fd, bytes)?;
        let header = segment.header();
        header.ranks.store(ranks, Ordering::Relaxed);
        header
            .slot_bytes
            .store(slot_bytes as u64, Ordering::Relaxed);
        for r in 0..ranks {
            segment
                .slot(r)
                .control()
                .turn
                .store(turn::PROXY, Ordering::Relaxed);
        }
        header.magic.store(MAGIC, Ordering::Release);
        Ok(segment)
    }

    /// Maps the segment of descriptor `fd` (a child's view), checking its header.
    pub fn open(fd: i32) -> io::Result<Segment> {
        // SAFETY: fstat on a descriptor; a bad one is an error, not UB.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(os_error("fstat of the shared segment"));
        }
        let bytes = st.st_size as usize;
        if bytes < HEADER_BYTES {
            return Err(io::Error::other("the shared segment is too small"));
        }
        let segment = Segment::map(fd, bytes)?;
        let header = segment.header();
        let ranks = header.ranks.load(Ordering::Relaxed);
        let slot = header.slot_bytes.load(Ordering::Relaxed) as usize;
        if header.magic.load(Ordering::Acquire) != MAGIC
            || Segment::size_for(ranks, slot) != Some(bytes)
        {
            return Err(io::Error::other("the shared segment is not mpsim's"));
        }
        Ok(segment)
    }

    fn map(fd: i32, bytes: usize) -> io::Result<Segment> {
        // SAFETY: a fresh shared mapping of a file we own.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(os_error("mmap of the shared segment"));
        }
        Ok(Segment {
            base: NonNull::new(ptr.cast()).expect("mmap never returns null on success"),
            bytes,
            fd,
        })
    }

    /// The descriptor.
    pub fn fd(&self) -> i32 {
        self.fd
    }

    /// The header.
    pub fn header(&self) -> &Header {
        // SAFETY: the first page is the header, mapped for the segment's life.
        unsafe { &*self.base.as_ptr().cast::<Header>() }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> u32 {
        self.header().ranks.load(Ordering::Relaxed)
    }

    /// The slot of `rank`.
    ///
    /// # Panics
    /// If `rank` is not below [`Segment::ranks`].
    pub fn slot(&self, rank: u32) -> Slot<'_> {
        assert!(rank < self.ranks(), "slot {rank} out of range");
        let slot_bytes = self.header().slot_bytes.load(Ordering::Relaxed) as usize;
        let offset = HEADER_BYTES + rank as usize * slot_bytes;
        debug_assert!(offset + slot_bytes <= self.bytes);
        // SAFETY: in bounds of the mapping, as checked at open.
        let base = unsafe { self.base.as_ptr().add(offset) };
        Slot {
            base,
            data_bytes: slot_bytes - CONTROL_BYTES,
            _segment: std::marker::PhantomData,
        }
    }

    /// Keeps the mapping for the rest of the process (a rank's library maps it once).
    pub fn leak(self) -> &'static Segment {
        Box::leak(Box::new(self))
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: our mapping and descriptor.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.bytes);
            libc::close(self.fd);
        }
    }
}

/// One rank's slot: its control block and data area.
#[derive(Clone, Copy)]
pub struct Slot<'s> {
    base: *mut u8,
    data_bytes: usize,
    _segment: std::marker::PhantomData<&'s Segment>,
}

unsafe impl Send for Slot<'_> {}
unsafe impl Sync for Slot<'_> {}

impl<'s> Slot<'s> {
    /// The control block.
    pub fn control(&self) -> &'s SlotControl {
        const { assert!(std::mem::size_of::<SlotControl>() <= CONTROL_BYTES) };
        // SAFETY: the slot starts with its control block.
        unsafe { &*self.base.cast::<SlotControl>() }
    }

    /// Bytes of the data area.
    pub fn capacity(&self) -> usize {
        self.data_bytes
    }

    /// The data area. Only the side whose turn it is touches it (the channel's protocol).
    pub(crate) fn data(&self) -> *mut u8 {
        // SAFETY: the data follows the control block inside the slot.
        unsafe { self.base.add(CONTROL_BYTES) }
    }
}
