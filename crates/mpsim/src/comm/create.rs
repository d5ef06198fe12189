//! Making, freeing and comparing communicators (`docs/p2p.md` §6): `dup`, `split` (over the
//! parent's collective context), `free`, `compare`, and the deterministic context ids (see the
//! module docs of [`super`]).

use std::collections::BTreeMap;

use mpsim_proto::deadlock::{CommOrder, CreatingCalls};
use mpsim_proto::error::{Error, Result};
use mpsim_proto::matching::Pattern;
use mpsim_proto::p2p::SendMode;

use super::group::{Header, Members};
use super::*;
use crate::request::{Names, wait_all};

/// `split`'s own requests: their errors and waits name `comm_split`.
const SPLIT_NAMES: Names = Names {
    call: SPLIT,
    wait: SPLIT,
};

/// How two communicators relate ([`Comm::compare`]; MPI's `MPI_Comm_compare`).
///
/// ```
/// use mpsim::{CommCompare, Launcher};
/// Launcher::new(2)
///     .run(|world| async move {
///         assert_eq!(world.compare(&world.clone()), CommCompare::Ident);
///         assert_eq!(world.compare(&world.dup()?), CommCompare::Congruent);
///         let reversed = world.split(Some(0), -i64::from(world.rank())).await?;
///         let reversed = reversed.expect("every rank has color 0");
///         assert_eq!(world.compare(&reversed), CommCompare::Similar);
///         Ok(())
///     })
///     .expect("compare");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommCompare {
    /// The same communicator, i.e. the same context: a clone (`MPI_IDENT`).
    Ident,
    /// The same ranks in the same order, another context, e.g. a dup (`MPI_CONGRUENT`).
    Congruent,
    /// The same ranks in another order (`MPI_SIMILAR`).
    Similar,
    /// Different ranks (`MPI_UNEQUAL`).
    Unequal,
}

impl Comm {
    // ---- making, freeing and comparing communicators ----

    /// A new communicator with the same group, in the same order, and new contexts: traffic on
    /// the two never meets (MPI's `MPI_Comm_dup`).
    ///
    /// Collective in MPI's sense (every member dups in the same order relative to its other
    /// communicator-creating calls on `self`), but it sends nothing: the new context id is
    /// derived (module docs, "Context ids").
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let twin = world.dup()?;
    ///         let peer = 1 - world.rank();
    ///         let (mut a, mut b) = ([0u8], [0u8]);
    ///         twin.send(&[2u8], peer, 0).await?;
    ///         world.send(&[1u8], peer, 0).await?;
    ///         world.recv(&mut a, peer, 0).await?; // not the dup's message
    ///         twin.recv(&mut b, peer, 0).await?;
    ///         assert_eq!((a, b), ([1], [2]));
    ///         Ok(())
    ///     })
    ///     .expect("dup");
    /// ```
    pub fn dup(&self) -> Result<Comm> {
        self.check_creating(DUP)?;
        let id = child_id(self.inner.id, self.next_child_index(), 0);
        let (rank, size, group) = (self.rank(), self.size(), self.inner.group.clone());
        Ok(Comm::from_parts(
            self.rt().clone(),
            Arc::clone(&self.inner.policy),
            id,
            rank,
            size,
            group,
            self.progress_for_child(),
        ))
    }

    /// This rank alone, as a communicator of one (MPI's `MPI_COMM_SELF`): local, it sends
    /// nothing and needs no other rank. Every call gives the same communicator (the same
    /// context), as `MPI_COMM_SELF` is one communicator.
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let me = world.solo();
    ///         assert_eq!((me.rank(), me.size()), (0, 1));
    ///         assert_eq!(me.world_rank_of(0), world.rank());
    ///         me.send(&[7u8], 0, 0).await?;
    ///         let mut got = [0u8];
    ///         me.recv(&mut got, 0, 0).await?;
    ///         assert_eq!(got, [7]);
    ///         Ok(())
    ///     })
    ///     .expect("solo");
    /// ```
    pub fn solo(&self) -> Comm {
        let me = self.world_rank(self.rank());
        let group = Group::Table(std::rc::Rc::from([me].as_slice()));
        Comm::from_parts(
            self.rt().clone(),
            Arc::clone(&self.inner.policy),
            SOLO_ID,
            0,
            1,
            group,
            self.progress_for_child(),
        )
    }

    /// The world rank of member `rank` of this communicator (`rank < size`; a larger one is
    /// taken modulo the size, never out of bounds).
    pub fn world_rank_of(&self, rank: u32) -> u32 {
        self.world_rank(rank % self.size().max(1))
    }

    /// Splits the communicator by `color` (MPI's `MPI_Comm_split`): the members with one color
    /// form a new communicator, ranked by `key`, then by rank in `self`. `None` (MPI's
    /// `MPI_UNDEFINED`) takes part but joins nothing and gets `None`.
    ///
    /// Collective: every member of `self` must call it. It exchanges messages on `self`'s
    /// collective context, never seen by point-to-point receives.
    ///
    /// ```
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let half = world.split(Some(me % 2), 0).await?.expect("every rank has a color");
    ///         assert_eq!((half.size(), half.rank()), (2, me / 2));
    ///         let none = world.split(None, 0).await?;
    ///         assert!(none.is_none());
    ///         Ok(())
    ///     })
    ///     .expect("split");
    /// ```
    pub async fn split(&self, color: Option<u32>, key: i64) -> Result<Option<Comm>> {
        self.check_creating(SPLIT)?;
        // Marks the communicator if this call does not complete (dropped, or failed).
        let mut unfinished = Unfinished(Some(&self.inner.abandoned));
        let index = self.next_child_index();
        let splits = self.inner.splits.get();
        if index < 64 {
            self.inner.splits.set(splits | 1 << index);
        }
        let mine = encode_split(color, key, order_code(index, splits));
        let members = if self.rank() == 0 {
            self.split_root(mine).await?
        } else {
            self.split_member(mine).await?
        };
        unfinished.0 = None;
        Ok(color.zip(members).map(|(c, members)| {
            let id = child_id(self.inner.id, index, u64::from(c) + 1);
            self.child(id, &members)
        }))
    }

    /// Frees the communicator (MPI's `MPI_Comm_free`): from now on every fallible call on it
    /// or any clone fails with `Error::InvalidComm`. Requests already started complete as
    /// usual. Freeing the world, or a freed communicator, is `InvalidComm`.
    ///
    /// ```
    /// mpsim::Launcher::new(1)
    ///     .run(|world| async move {
    ///         let mut twin = world.dup()?;
    ///         let clone = twin.clone();
    ///         twin.free()?;
    ///         let err = clone.send(&[1u8], 0, 0).await.expect_err("freed");
    ///         assert!(matches!(err, mpsim::Error::InvalidComm { .. }));
    ///         Ok(())
    ///     })
    ///     .expect("free");
    /// ```
    pub fn free(&mut self) -> Result<()> {
        self.live_or(|| self.site(FREE))?;
        if self.inner.id == WORLD_ID {
            return Err(Error::InvalidComm {
                site: self.site(FREE),
            });
        }
        self.inner.freed.set(true);
        Ok(())
    }

    /// How `self` and `other` relate: the same communicator, the same ranks in the same or in
    /// another order, or different ranks (example on [`CommCompare`]).
    pub fn compare(&self, other: &Comm) -> CommCompare {
        if self.inner.p2p == other.inner.p2p {
            return CommCompare::Ident;
        }
        let (mut mine, mut theirs) = (self.world_ranks(), other.world_ranks());
        if mine == theirs {
            return CommCompare::Congruent;
        }
        mine.sort_unstable();
        theirs.sort_unstable();
        if mine == theirs {
            CommCompare::Similar
        } else {
            CommCompare::Unequal
        }
    }

    /// A communicator of `members` (ranks of `self`, in new-rank order, distinct, the caller
    /// among them), made by them alone (MPI's `MPI_Comm_create_group`): the ranks of `self`
    /// that are not members do not call it.
    ///
    /// Collective over `members` in MPI's sense (each member calls it with the same list and
    /// `tag`, in the same order relative to its other `create_group` calls on `self`), but it
    /// sends nothing: the id is derived from the members' world ranks, the tag and a count of
    /// this rank's own (module docs, "Context ids"). A list that is empty, names a rank twice or
    /// out of `self`, or leaves out the caller is `InvalidArgument` naming the call; a negative
    /// `tag` is `InvalidTag`.
    ///
    /// ```
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         // Ranks 3 and 1 make a communicator; 0 and 2 take no part.
    ///         if world.rank() % 2 == 1 {
    ///             let pair = world.create_group(&[3, 1], 7)?;
    ///             assert_eq!((pair.size(), pair.rank()), (2, (3 - world.rank()) / 2));
    ///             let peer = 1 - pair.rank();
    ///             let mut got = [0u32];
    ///             pair.send(&[world.rank()], peer, 0).await?;
    ///             pair.recv(&mut got, peer, 0).await?;
    ///             assert_eq!(got[0], 4 - world.rank());
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("create_group");
    /// ```
    pub fn create_group(&self, members: &[u32], tag: i32) -> Result<Comm> {
        self.check_live(CREATE_GROUP)?;
        if !(0..=mpsim_proto::matching::TAG_UB).contains(&tag) {
            return Err(Error::InvalidTag {
                site: self.site(CREATE_GROUP),
                tag: Tag::Value(tag),
            });
        }
        self.check_members(CREATE_GROUP, members, &[])?;
        let mut key = mix(GROUP_SALT, tag as u32 as u64);
        for &m in members {
            key = mix(key, u64::from(self.world_rank(m)));
        }
        let n = {
            let mut made = self.inner.groups_made.borrow_mut();
            let n = made.entry(key).or_insert(0);
            *n += 1;
            *n - 1
        };
        let id = mix(mix(self.inner.id, key), n);
        Ok(self.child(id, &Members::of(members.to_vec())))
    }

    /// The point-to-point side of an intercommunicator between `local` and `remote`
    /// (disjoint ranks of `self`, each in its group's rank order; the caller in `local`): the
    /// C door's intercommunicators are made of it (`docs/c.md`).
    ///
    /// Its rank is the caller's in `local`, its size is `remote`'s, and a rank it names (a
    /// send's destination, a receive's source, a status's) is a rank of the remote group, as on
    /// MPI's intercommunicators. Collective over `self`: every member of `self` calls it, in
    /// the same order relative to its other communicator-creating calls on `self`, a member of
    /// the other group with the lists swapped; it sends nothing (its id is derived as a dup's,
    /// module docs, "Context ids"). Only point-to-point calls and `free` run on it; the others
    /// (collectives, `dup`, `split`, ...) are `InvalidComm`. Bad lists are `InvalidArgument`.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         // Rank 0 alone on one side, ranks 1 and 2 on the other.
    ///         let (a, b) = (vec![0], vec![1, 2]);
    ///         let left = world.rank() == 0;
    ///         let inter = if left { world.intercomm(&a, &b)? } else { world.intercomm(&b, &a)? };
    ///         if left {
    ///             assert_eq!((inter.rank(), inter.size()), (0, 2));
    ///             inter.send(&[5u8], 1, 0).await?; // to world rank 2
    ///         } else {
    ///             assert_eq!((inter.rank(), inter.size()), (world.rank() - 1, 1));
    ///         }
    ///         if world.rank() == 2 {
    ///             let mut got = [0u8];
    ///             let status = inter.recv(&mut got, mpsim::ANY_SOURCE, 0).await?;
    ///             assert_eq!((got[0], status.source), (5, 0)); // rank 0 of the other group
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("intercomm");
    /// ```
    pub fn intercomm(&self, local: &[u32], remote: &[u32]) -> Result<Comm> {
        self.check_creating(INTERCOMM)?;
        self.check_members(INTERCOMM, local, remote)?;
        if remote.is_empty() {
            return Err(self.bad_members(INTERCOMM, "the remote group is empty"));
        }
        let rank = local
            .iter()
            .position(|&m| m == self.rank())
            .expect("check_members found the caller") as u32;
        let id = child_id(self.inner.id, self.next_child_index(), INTER_SALT);
        let group = self.inner.group.child(&Members::of(remote.to_vec()));
        let mut inner = Comm::from_parts(
            self.rt().clone(),
            Arc::clone(&self.inner.policy),
            id,
            rank,
            remote.len() as u32,
            group,
            self.progress_for_child(),
        );
        Rc::get_mut(&mut inner.inner)
            .expect("a communicator just made has no clone")
            .inter = true;
        Ok(inner)
    }

    /// `InvalidArgument` unless `members` (then `others`) are ranks of `self`, none named twice
    /// in either, the caller among `members`, and `members` not empty.
    fn check_members(&self, call: &'static str, members: &[u32], others: &[u32]) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for &m in members.iter().chain(others) {
            if m >= self.size() {
                return Err(self.bad_members(
                    call,
                    &format!("rank {m} is not in the communicator of {}", self.size()),
                ));
            }
            if !seen.insert(m) {
                return Err(self.bad_members(call, &format!("rank {m} is named twice")));
            }
        }
        if !members.contains(&self.rank()) {
            return Err(self.bad_members(
                call,
                &format!(
                    "the calling rank {} is not among the members {members:?}",
                    self.rank()
                ),
            ));
        }
        Ok(())
    }

    /// The `InvalidArgument` error of `call` with a bad list of members.
    fn bad_members(&self, call: &'static str, what: &str) -> Error {
        Error::InvalidArgument {
            what: format!("{}: {what}", self.site(call)),
        }
    }

    // ---- helpers ----

    /// Before a communicator-creating call: the communicator is live, and no earlier `split`
    /// on it was left unfinished. Such a split had drawn its child index and may have sent its
    /// `(color, key)`: the next one would pair with the others' current call and give this
    /// rank a communicator of its own, silently (`Unsupported` instead: a collective call
    /// must complete on every member, in the same order).
    fn check_creating(&self, call: &'static str) -> Result<()> {
        self.check_live(call)?;
        if self.inner.abandoned.get() {
            return Err(Error::Unsupported {
                what: format!(
                    "{}: an earlier comm_split on this communicator was dropped or failed \
                     before it completed; a communicator-creating call must complete on every \
                     member, in the same order",
                    self.site(call)
                ),
            });
        }
        Ok(())
    }

    /// The index of the next communicator-creating call on this communicator.
    fn next_child_index(&self) -> u64 {
        let index = self.inner.created.get();
        self.inner.created.set(index + 1);
        index
    }

    /// The child `id` whose members are `members` (ranks in `self`, in new-rank order), which
    /// include this rank.
    fn child(&self, id: u64, members: &Members) -> Comm {
        // Invariant: rank 0 sends each member the members of its own color, which name it.
        let rank = members
            .new_rank(self.rank())
            .expect("a member's list names it");
        let group = self.inner.group.child(members);
        Comm::from_parts(
            self.rt().clone(),
            Arc::clone(&self.inner.policy),
            id,
            rank,
            members.len(),
            group,
            self.progress_for_child(),
        )
    }

    /// `split` at parent rank 0: gathers every `(color, key)`, answers each member, and
    /// returns its own color's members. A member's answer is a [`Header`]: evenly spaced
    /// members in it, or the length of the list that follows in a second message.
    async fn split_root(&self, mine: [i64; 2]) -> Result<Option<Members>> {
        let mut entries = vec![mine];
        for source in 1..self.size() {
            let mut entry = [0i64; 2];
            let pattern = Pattern::new(self.inner.coll, source, SPLIT_TAG);
            let bytes = bytemuck::cast_slice_mut(&mut entry);
            self.post_recv(SPLIT_NAMES, Some(pattern), bytes)
                .wait()
                .await?;
            entries.push(entry);
        }
        // Every member must be at the same place in the same order of calls (module docs of
        // `comm`, "Context ids"): those that are not are named, and every member that waits
        // for an answer is told.
        let differ: Vec<u32> = (1..self.size())
            .filter(|&r| split_code(entries[r as usize][0]) != split_code(mine[0]))
            .collect();
        if !differ.is_empty() {
            return Err(self.order_mismatch(&entries, &differ).await);
        }
        let own = split_color(mine[0]);
        let mut answers = Vec::new();
        let mut own_members = None;
        for (color, list) in split_groups(&entries) {
            let members = Members::of(list);
            let header = members.header();
            // The header, then a list's ranks when the members are not evenly spaced.
            let list = match &members {
                Members::List(list) => Some(bytemuck::cast_slice(list)),
                Members::Strided { .. } => None,
            };
            let parts: Vec<&[u8]> = std::iter::once(bytemuck::cast_slice(&header))
                .chain(list)
                .collect();
            let (mode, coll) = (SendMode::Standard, self.inner.coll);
            for member in (0..members.len()).map(|r| members.parent_rank(r)) {
                if member == 0 {
                    continue;
                }
                for &bytes in &parts {
                    answers.push(self.post_send(
                        coll,
                        SPLIT_NAMES,
                        mode,
                        bytes,
                        member,
                        SPLIT_TAG,
                    )?);
                }
            }
            if Some(color) == own {
                own_members = Some(members);
            }
        }
        wait_all(&mut answers).await?;
        Ok(own_members)
    }

    /// At parent rank 0 of a `split`: the members `differ` (parent ranks) made their calls in
    /// another order than this rank (`entries`: every member's message); each member that
    /// waits for an answer (it gave a color) is told, and the error names them.
    async fn order_mismatch(&self, entries: &[[i64; 2]], differ: &[u32]) -> Error {
        let own = split_code(entries[0][0]);
        let header: Header = [ORDER_MISMATCH, own as u32, 0, 0];
        let bytes = bytemuck::cast_slice(&header);
        let (mode, coll) = (SendMode::Standard, self.inner.coll);
        let mut answers = Vec::new();
        for member in 1..self.size() {
            if split_color(entries[member as usize][0]).is_some() {
                match self.post_send(coll, SPLIT_NAMES, mode, bytes, member, SPLIT_TAG) {
                    Ok(answer) => answers.push(answer),
                    Err(e) => return e,
                }
            }
        }
        if let Err(e) = wait_all(&mut answers).await {
            return e;
        }
        let ranks = std::iter::once(0)
            .chain(differ.iter().copied())
            .map(|r| created_calls(self.world_rank(r), split_code(entries[r as usize][0])))
            .collect();
        self.order_error(ranks)
    }

    /// `CommOrder` of this rank's `split`, naming `ranks`' calls.
    fn order_error(&self, ranks: Vec<CreatingCalls>) -> Error {
        Error::CommOrder {
            site: self.site(SPLIT),
            order: Box::new(CommOrder { ranks }),
        }
    }

    /// `split` at a parent rank other than 0: sends `(color, key)` to rank 0 and, with a
    /// color, receives its color's members ([`Comm::split_root`] says how).
    async fn split_member(&self, mine: [i64; 2]) -> Result<Option<Members>> {
        let (mode, coll) = (SendMode::Standard, self.inner.coll);
        let bytes = bytemuck::cast_slice(&mine);
        self.post_send(coll, SPLIT_NAMES, mode, bytes, 0, SPLIT_TAG)?
            .wait()
            .await?;
        if split_color(mine[0]).is_none() {
            return Ok(None);
        }
        let pattern = Pattern::new(coll, 0, SPLIT_TAG);
        let mut header: Header = [0; 4];
        let bytes = bytemuck::cast_slice_mut(&mut header);
        self.post_recv(SPLIT_NAMES, Some(pattern), bytes)
            .wait()
            .await?;
        if header[0] == ORDER_MISMATCH {
            // Rank 0 made its calls in another order: what it made, and what this rank made.
            let ranks = vec![
                created_calls(self.world_rank(0), u64::from(header[1])),
                created_calls(self.world_rank(self.rank()), split_code(mine[0])),
            ];
            return Err(self.order_error(ranks));
        }
        match Members::from_header(header) {
            Ok(members) => Ok(Some(members)),
            Err(len) => {
                let mut list = vec![0u32; len as usize];
                let bytes = bytemuck::cast_slice_mut(&mut list);
                self.post_recv(SPLIT_NAMES, Some(pattern), bytes)
                    .wait()
                    .await?;
                Ok(Some(Members::List(list)))
            }
        }
    }
}

/// `split`'s message: the color (bit 32 set for none), the sender's order of calls
/// ([`order_code`], above bit 32), and the key.
fn encode_split(color: Option<u32>, key: i64, code: u64) -> [i64; 2] {
    let color = color.map_or(1 << 32, u64::from);
    [(color | code << 33) as i64, key]
}

/// The color of a `split` message.
fn split_color(encoded: i64) -> Option<u32> {
    let encoded = encoded as u64;
    (encoded & 1 << 32 == 0).then_some(encoded as u32)
}

/// The order of calls of a `split` message's sender ([`order_code`]).
fn split_code(encoded: i64) -> u64 {
    encoded as u64 >> 33
}

/// The first word of a `split`'s answer ([`Header`]) that tells a member its order of calls
/// differs from rank 0's, whose order code follows.
const ORDER_MISMATCH: u32 = 2;

/// A `split` that is communicator-creating call `index` on its communicator, after the calls
/// whose bits `splits` sets (bit `i`: call `i` was a `split`), as 31 bits: up to
/// [`CreatingCalls::KNOWN`] calls before it, every call (a 1 above the call bits); beyond,
/// bit 30 and the index alone. Two members agree if and only if their codes are equal (as
/// far as the index tells, beyond).
fn order_code(index: u64, splits: u64) -> u64 {
    if index <= CreatingCalls::KNOWN {
        1 << index | splits & ((1 << index) - 1)
    } else {
        1 << 30 | index.min((1 << 30) - 1)
    }
}

/// What [`order_code`] `code` of world rank `rank` says: its calls, the last one a `split`.
fn created_calls(rank: u32, code: u64) -> CreatingCalls {
    if code & 1 << 30 != 0 {
        return CreatingCalls {
            rank,
            calls: vec![SPLIT],
            before: code & ((1 << 30) - 1),
        };
    }
    let before = u64::from(63 - code.leading_zeros());
    let calls = (0..before)
        .map(|i| if code & 1 << i != 0 { SPLIT } else { DUP })
        .chain([SPLIT])
        .collect();
    CreatingCalls {
        rank,
        calls,
        before,
    }
}

/// Groups `split` messages (indexed by parent rank) by color: each color's parent ranks, in
/// new-rank order (key, then parent rank).
fn split_groups(entries: &[[i64; 2]]) -> BTreeMap<u32, Vec<u32>> {
    let mut by_color: BTreeMap<u32, Vec<(i64, u32)>> = BTreeMap::new();
    for (&[color, key], rank) in entries.iter().zip(0u32..) {
        if let Some(color) = split_color(color) {
            by_color.entry(color).or_default().push((key, rank));
        }
    }
    by_color
        .into_iter()
        .map(|(color, mut members)| {
            members.sort_unstable();
            (color, members.into_iter().map(|(_, rank)| rank).collect())
        })
        .collect()
}

/// The id of the child made by the `index`th communicator-creating call on `parent`; `salt` is
/// 0 for `dup` and `color + 1` for `split`.
/// Sets its flag when dropped holding it: a `split` that did not complete.
struct Unfinished<'a>(Option<&'a Cell<bool>>);

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(flag) = self.0 {
            flag.set(true);
        }
    }
}

/// The domain of `create_group`'s keys (module docs, "Context ids"): "CRGROUP".
const GROUP_SALT: u64 = 0x4352_4752_4F55_5000;

/// `intercomm`'s salt in [`child_id`], above every `split`'s `color + 1`: "INTERCO".
const INTER_SALT: u64 = 0x494E_5445_5243_4F00;

/// The call names of `create_group` and `intercomm` in errors.
const CREATE_GROUP: &str = "comm_create_group";
const INTERCOMM: &str = "intercomm_create";

fn child_id(parent: u64, index: u64, salt: u64) -> u64 {
    mix(mix(parent, index), salt)
}

/// Mixes two words into one (module docs, "Context ids").
pub(super) fn mix(a: u64, b: u64) -> u64 {
    splitmix64(splitmix64(a) ^ b)
}

/// The splitmix64 finalizer: a bijection of `u64` that scatters nearby inputs.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_groups_orders_by_key_then_rank_and_drops_undefined() {
        let none = encode_split(None, 0, 1);
        let entries = [
            encode_split(Some(1), 5, 1),
            encode_split(Some(0), 2, 1),
            none,
            encode_split(Some(1), -3, 1),
            encode_split(Some(0), 2, 1),
            encode_split(Some(1), 5, 1),
        ];
        let groups = split_groups(&entries);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[&0], [1, 4]);
        assert_eq!(groups[&1], [3, 0, 5]);
    }

    /// A `split`'s order code tells every call before it, up to `KNOWN` of them, and the
    /// index beyond; it rides above the color, which reads back the same.
    #[test]
    fn order_codes_tell_the_calls_before_a_split() {
        // comm_dup, comm_split, comm_dup, then this comm_split: calls 0..3, bit 1 a split.
        let code = order_code(3, 0b010);
        assert_eq!(
            created_calls(7, code),
            CreatingCalls {
                rank: 7,
                calls: vec![DUP, SPLIT, DUP, SPLIT],
                before: 3
            }
        );
        assert_eq!(created_calls(0, order_code(0, 0)).calls, [SPLIT]);
        assert_ne!(
            order_code(1, 0),
            order_code(1, 1),
            "dup then split vs split then split"
        );
        assert_ne!(order_code(1, 0), order_code(0, 0));
        let far = created_calls(1, order_code(100, u64::MAX));
        assert_eq!((far.calls, far.before), (vec![SPLIT], 100));
        for (color, code) in [
            (Some(0), 1),
            (Some(u32::MAX), order_code(29, u64::MAX)),
            (None, 1 << 30 | 5),
        ] {
            let encoded = encode_split(color, -9, code)[0];
            assert_eq!((split_color(encoded), split_code(encoded)), (color, code));
        }
    }

    #[test]
    fn child_ids_differ_by_index_and_color() {
        let ids = [
            child_id(0, 0, 0),
            child_id(0, 1, 0),
            child_id(0, 1, 1),
            child_id(0, 1, 2),
            child_id(child_id(0, 0, 0), 0, 0),
        ];
        for (i, a) in ids.iter().enumerate() {
            assert!(ids[i + 1..].iter().all(|b| a != b), "{ids:x?}");
        }
        assert_ne!(mix(0, 0), 0, "a child's p2p context is not the world's");
    }
}
