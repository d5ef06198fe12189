//! [`ProgramError`]: a program's own failure ([`Error::Program`]), and the `From` conversions
//! that let a rank's program use `?` on the errors of the standard library.
//!
//! mpsim's `Result` is the program's too (a rank's program returns `mpsim::Result<()>`), so an
//! error of the program's own, a file it cannot read or a number it cannot parse, needs a place
//! in [`Error`]. It is boxed: [`Error`] stays as small as it was, and a program's failure is
//! rare. The error it came from is kept ([`std::error::Error::source`]: downcast it to its own
//! type), shared behind an `Arc` so that [`Error`] stays `Clone`.
//!
//! What it does not do: a blanket `From<E: std::error::Error>` cannot exist beside `From<T> for
//! T` ([`Error`] is itself an error), so the conversions are listed one type at a time; any
//! other error type goes through [`Error::program_from`].

use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use super::Error;

/// A rank's program failed for a reason of its own ([`Error::Program`]).
///
/// ```
/// use mpsim_proto::error::Error;
///
/// // A rank's program returns mpsim's `Result`: its own errors meet mpsim's with `?`.
/// fn steps(arg: &str) -> mpsim_proto::Result<u32> {
///     Ok(arg.parse::<u32>()?)
/// }
///
/// let mut e = steps("ten").unwrap_err();
/// // The backend names the rank whose program returned it, and the simulator the time.
/// e.stamp_rank(1);
/// e.stamp_time(2_000);
/// let Error::Program(failure) = &e else { panic!("{e:?}") };
/// assert_eq!((failure.rank, failure.time_ns), (Some(1), Some(2_000)));
/// assert_eq!(failure.what, "invalid digit found in string");
/// // The error it came from is kept, to downcast.
/// let source = std::error::Error::source(&e).expect("the parse error");
/// assert!(source.is::<std::num::ParseIntError>());
/// assert_eq!(e.to_string(), "rank 1 failed at t=2000 ns: invalid digit found in string");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ProgramError {
    /// World rank of the program that failed: filled in by the backend when the rank's program
    /// returns the error (`None` for one that never left a rank's program, or made outside
    /// one).
    pub rank: Option<u32>,
    /// Virtual time, in nanoseconds, at which the rank's program returned the error (simulator
    /// only).
    pub time_ns: Option<u64>,
    /// What went wrong, as the program said it or as the error it came from says it.
    pub what: String,
    /// The error it came from, if any.
    source: Source,
}

impl ProgramError {
    /// A failure described by `what`, with no error behind it.
    fn new(what: String) -> Self {
        ProgramError {
            rank: None,
            time_ns: None,
            what,
            source: Source::default(),
        }
    }
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rank {
            Some(rank) => write!(f, "rank {rank} failed")?,
            None => f.write_str("the program failed")?,
        }
        if let Some(t) = self.time_ns {
            write!(f, " at t={t} ns")?;
        }
        write!(f, ": {}", self.what)
    }
}

/// The error a program's failure came from, if any, dropped out of line and without unwinding.
///
/// An `Error` is dropped on the simulator's hot path (a request's slot made free, a receive's
/// completion), where its drop code is inlined. An `Arc<dyn Error>` dropped in place there
/// runs code that may unwind (the source's own destructor): every place that drops an `Error`
/// gained unwinding paths, the request slot's `free` no longer fitted inline, and the
/// 1,024-rank ring of `bench/sim-ring-cycles.sh` took 1,430 instructions per message instead
/// of 1,372 (callgrind). Held in a `ManuallyDrop` and dropped by a `#[cold]` `extern "C"`
/// function, which cannot unwind (a destructor that panics in it aborts the process), it costs
/// the `Error`'s drop code one call that cannot unwind, and the ring nothing. Safe code: the
/// `Arc` is taken out of the `ManuallyDrop` by value.
#[derive(Default)]
struct Source(ManuallyDrop<Option<Arc<dyn std::error::Error + Send + Sync>>>);

impl Clone for Source {
    fn clone(&self) -> Self {
        Source(ManuallyDrop::new(Option::clone(&self.0)))
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Drop for Source {
    #[inline]
    fn drop(&mut self) {
        drop_source(self);
    }
}

/// Drops the error behind `source` (see [`Source`]: out of line, never unwinding).
#[cold]
#[inline(never)]
extern "C" fn drop_source(source: &mut Source) {
    let source = std::mem::replace(&mut source.0, ManuallyDrop::new(None));
    drop(ManuallyDrop::into_inner(source));
}

/// The message already says what the source says (a run's error is printed on one line);
/// the source is there to be downcast.
impl std::error::Error for ProgramError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .0
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Equal when rank, time and message are: the error behind it is not compared (`dyn Error`
/// has no equality), but its message is the message.
impl PartialEq for ProgramError {
    fn eq(&self, other: &Self) -> bool {
        (self.rank, self.time_ns, &self.what) == (other.rank, other.time_ns, &other.what)
    }
}

impl Eq for ProgramError {}

impl Error {
    /// The program's own failure, described by `what` ([`Error::Program`]); `?` makes one
    /// from a `String` or `&str` too.
    ///
    /// ```
    /// use mpsim_proto::Error;
    ///
    /// fn check(ranks: u32) -> mpsim_proto::Result<()> {
    ///     if ranks < 2 {
    ///         return Err(Error::program("this program needs at least 2 ranks"));
    ///     }
    ///     Ok(())
    /// }
    /// assert_eq!(
    ///     check(1).unwrap_err().to_string(),
    ///     "the program failed: this program needs at least 2 ranks"
    /// );
    /// ```
    #[cold]
    pub fn program(what: impl Into<String>) -> Self {
        Error::Program(Box::new(ProgramError::new(what.into())))
    }

    /// The program's own failure caused by `error`, of any error type (`?` converts the
    /// standard library's by itself): its message is `error`'s, and `error` is kept as the
    /// source.
    ///
    /// ```
    /// # #[derive(Debug)] struct BadInput;
    /// # impl std::fmt::Display for BadInput {
    /// #     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("bad input") }
    /// # }
    /// # impl std::error::Error for BadInput {}
    /// # fn check() -> Result<(), BadInput> { Err(BadInput) }
    /// # fn demo() -> mpsim_proto::Result<()> {
    /// check().map_err(mpsim_proto::Error::program_from)?;
    /// # Ok(()) }
    /// assert_eq!(demo().unwrap_err().to_string(), "the program failed: bad input");
    /// ```
    #[cold]
    pub fn program_from(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::program_from_arc(Arc::new(error))
    }

    /// [`Error::program_from`] of an error already shared.
    #[cold]
    fn program_from_arc(error: Arc<dyn std::error::Error + Send + Sync>) -> Self {
        let mut failure = ProgramError::new(error.to_string());
        failure.source = Source(ManuallyDrop::new(Some(error)));
        Error::Program(Box::new(failure))
    }
}

/// `From` a standard library error type for `?`: [`Error::program_from`].
macro_rules! from_std_error {
    ($($ty:ty),* $(,)?) => {$(
        #[doc = concat!("`?` on a `", stringify!($ty), "` in a program: [`Error::program_from`].")]
        impl From<$ty> for Error {
            #[cold]
            fn from(error: $ty) -> Self {
                Error::program_from(error)
            }
        }
    )*};
}

from_std_error!(
    std::io::Error,
    std::fmt::Error,
    std::num::ParseIntError,
    std::num::ParseFloatError,
    std::num::TryFromIntError,
    std::str::ParseBoolError,
    std::str::Utf8Error,
    std::string::FromUtf8Error,
    std::array::TryFromSliceError,
    std::char::ParseCharError,
    std::net::AddrParseError,
);

/// `?` on a boxed error (`Box<dyn Error + Send + Sync>`, what many libraries return): the
/// program's failure, the boxed error kept as its source.
impl From<Box<dyn std::error::Error + Send + Sync>> for Error {
    #[cold]
    fn from(error: Box<dyn std::error::Error + Send + Sync>) -> Self {
        Error::program_from_arc(Arc::from(error))
    }
}

/// `?` on a boxed error that may not cross threads (`Box<dyn Error>`): the program's failure
/// with its message only (an error that is not `Send` cannot be kept in an [`Error`], which
/// crosses threads).
impl From<Box<dyn std::error::Error>> for Error {
    #[cold]
    fn from(error: Box<dyn std::error::Error>) -> Self {
        Error::program(error.to_string())
    }
}

/// `?` on a `Result<_, String>` in a program: the program's failure, with that message.
impl From<String> for Error {
    #[cold]
    fn from(what: String) -> Self {
        Error::program(what)
    }
}

/// `?` on a `Result<_, &str>` in a program: the program's failure, with that message.
impl From<&str> for Error {
    #[cold]
    fn from(what: &str) -> Self {
        Error::program(what)
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// What `?` makes of the standard library's errors: the program's failure with the error's
    /// message, the error kept as the source (downcast to its type); of strings, the message
    /// alone. Equality ignores the source, clones keep it.
    #[test]
    fn question_mark_makes_a_program_error() {
        fn parse(s: &str) -> Result<u32, Error> {
            Ok(s.parse::<u32>()?)
        }
        let e = parse("x").expect_err("not a number");
        assert_eq!(
            e.to_string(),
            "the program failed: invalid digit found in string"
        );
        let source = e.source().expect("a source");
        assert!(source.is::<std::num::ParseIntError>(), "{source:?}");
        assert!(e.clone().source().is_some(), "a clone keeps the source");
        assert_eq!(e, Error::program("invalid digit found in string"));

        let io = Error::from(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no input",
        ));
        assert!(matches!(&io, Error::Program(p) if p.what == "no input"));
        assert!(io.source().expect("a source").is::<std::io::Error>());

        let boxed: Box<dyn std::error::Error + Send + Sync> = "boxed".into();
        assert_eq!(
            Error::from(boxed).source().map(ToString::to_string),
            Some("boxed".into())
        );
        let unsendable: Box<dyn std::error::Error> = "local".into();
        assert_eq!(Error::from(unsendable), Error::program("local"));
        assert_eq!(Error::from("said"), Error::from(String::from("said")));
        assert!(Error::from("said").source().is_none());
    }

    /// The program's failure is boxed and `Abort` is three small fields: `Error` is no larger
    /// than before them (48 bytes, `PendingAtExit`'s rank, time and list), since every
    /// `Result` of the library carries one (see `Error`'s doc).
    #[test]
    fn the_new_variants_leave_error_its_size() {
        assert!(std::mem::size_of::<Error>() <= 48);
        assert!(std::mem::size_of::<Result<(), Error>>() <= 48);
    }

    /// A program's failure names the rank and time the backend stamps on it.
    #[test]
    fn a_program_error_names_its_rank_and_time() {
        let mut e = Error::program("no input");
        e.stamp_rank(3);
        e.stamp_time(1_500);
        e.stamp_rank(4);
        e.stamp_time(2_000);
        assert_eq!(e.to_string(), "rank 3 failed at t=1500 ns: no input");
        assert!(e.site().is_none());
    }
}
