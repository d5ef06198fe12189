//! MPI error classes: what [`Error::class`](super::Error::class) says an error is in MPI's
//! terms, which a C interface returns and a Rust program may match on (`docs/p2p.md` §8).
//!
//! Only the names: the numbers behind `MPI_ERR_*` are an ABI's business (each MPI library has
//! its own), and belong to the C interface that writes `mpi.h`. The classes here are those
//! mpsim's errors fall in, and those the next calls need (datatypes, collectives, groups);
//! MPI's classes of files, windows, info objects, ports and sessions join with their features.

use std::fmt;

/// An MPI error class (MPI 4.1 §9.4), by its name in the standard.
///
/// ```
/// use mpsim_proto::error::ErrorClass;
/// assert_eq!(ErrorClass::Truncate.mpi_name(), "MPI_ERR_TRUNCATE");
/// assert_eq!(ErrorClass::InStatus.to_string(), "MPI_ERR_IN_STATUS");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorClass {
    /// `MPI_ERR_BUFFER`: an invalid buffer pointer, or (mpsim) the attached buffer of buffered
    /// sends: too small, already attached, or none.
    Buffer,
    /// `MPI_ERR_COUNT`: an invalid count argument.
    Count,
    /// `MPI_ERR_TYPE`: an invalid datatype.
    Type,
    /// `MPI_ERR_TAG`: an invalid tag.
    Tag,
    /// `MPI_ERR_COMM`: an invalid communicator.
    Comm,
    /// `MPI_ERR_RANK`: an invalid rank.
    Rank,
    /// `MPI_ERR_REQUEST`: an invalid request.
    Request,
    /// `MPI_ERR_ROOT`: an invalid root of a collective.
    Root,
    /// `MPI_ERR_GROUP`: an invalid group.
    Group,
    /// `MPI_ERR_OP`: an invalid reduction operation.
    Op,
    /// `MPI_ERR_ARG`: an invalid argument of another kind.
    Arg,
    /// `MPI_ERR_UNKNOWN`: an unknown error.
    Unknown,
    /// `MPI_ERR_TRUNCATE`: a message truncated on receive.
    Truncate,
    /// `MPI_ERR_OTHER`: a known error not in this list.
    Other,
    /// `MPI_ERR_INTERN`: an internal error of the implementation.
    Intern,
    /// `MPI_ERR_PENDING`: a request not completed (pending).
    Pending,
    /// `MPI_ERR_IN_STATUS`: the error is in a status, one per request.
    InStatus,
    /// `MPI_ERR_NO_MEM`: memory could not be had.
    NoMem,
    /// `MPI_ERR_IO`: an I/O error.
    Io,
    /// `MPI_ERR_UNSUPPORTED_OPERATION`: an operation this implementation does not support.
    UnsupportedOperation,
    /// `MPI_ERR_PROC_ABORTED`: the operation failed because a peer process aborted (MPI 4.0).
    ProcAborted,
}

impl ErrorClass {
    /// Every class, in the order of the enum.
    pub const ALL: [ErrorClass; 21] = [
        Self::Buffer,
        Self::Count,
        Self::Type,
        Self::Tag,
        Self::Comm,
        Self::Rank,
        Self::Request,
        Self::Root,
        Self::Group,
        Self::Op,
        Self::Arg,
        Self::Unknown,
        Self::Truncate,
        Self::Other,
        Self::Intern,
        Self::Pending,
        Self::InStatus,
        Self::NoMem,
        Self::Io,
        Self::UnsupportedOperation,
        Self::ProcAborted,
    ];

    /// The class's name in the MPI standard and in `mpi.h`: `"MPI_ERR_TRUNCATE"`.
    pub const fn mpi_name(self) -> &'static str {
        match self {
            Self::Buffer => "MPI_ERR_BUFFER",
            Self::Count => "MPI_ERR_COUNT",
            Self::Type => "MPI_ERR_TYPE",
            Self::Tag => "MPI_ERR_TAG",
            Self::Comm => "MPI_ERR_COMM",
            Self::Rank => "MPI_ERR_RANK",
            Self::Request => "MPI_ERR_REQUEST",
            Self::Root => "MPI_ERR_ROOT",
            Self::Group => "MPI_ERR_GROUP",
            Self::Op => "MPI_ERR_OP",
            Self::Arg => "MPI_ERR_ARG",
            Self::Unknown => "MPI_ERR_UNKNOWN",
            Self::Truncate => "MPI_ERR_TRUNCATE",
            Self::Other => "MPI_ERR_OTHER",
            Self::Intern => "MPI_ERR_INTERN",
            Self::Pending => "MPI_ERR_PENDING",
            Self::InStatus => "MPI_ERR_IN_STATUS",
            Self::NoMem => "MPI_ERR_NO_MEM",
            Self::Io => "MPI_ERR_IO",
            Self::UnsupportedOperation => "MPI_ERR_UNSUPPORTED_OPERATION",
            Self::ProcAborted => "MPI_ERR_PROC_ABORTED",
        }
    }
}

impl fmt::Display for ErrorClass {
    /// The MPI name ([`ErrorClass::mpi_name`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mpi_name())
    }
}

#[cfg(test)]
mod tests {
    //! One test per class an [`Error`] falls in, each listing every variant of that class
    //! (`docs/p2p.md` §8).

    use super::ErrorClass;
    use crate::deadlock::{CommOrder, DeadlockReport, LivelockReport};
    use crate::error::{Error, Site};
    use crate::interrupt::Signal;
    use crate::matching::Tag;

    fn site() -> Box<Site> {
        Site::new(1, "send")
    }

    fn what() -> String {
        "what".to_owned()
    }

    /// Every error of `errors` is in `class`, which is named `name`.
    fn all_in(class: ErrorClass, name: &str, errors: &[Error]) {
        assert_eq!(class.mpi_name(), name);
        for e in errors {
            assert_eq!(e.class(), class, "{e:?}");
        }
    }

    #[test]
    fn errors_class_rank_is_mpi_err_rank() {
        let e = Error::InvalidRank {
            site: site(),
            rank: 5,
            size: 2,
        };
        all_in(ErrorClass::Rank, "MPI_ERR_RANK", &[e]);
    }

    #[test]
    fn errors_class_tag_is_mpi_err_tag() {
        let e = Error::InvalidTag {
            site: site(),
            tag: Tag::Value(-5),
        };
        all_in(ErrorClass::Tag, "MPI_ERR_TAG", &[e]);
    }

    #[test]
    fn errors_class_comm_is_mpi_err_comm() {
        let order = Box::new(CommOrder { ranks: Vec::new() });
        all_in(
            ErrorClass::Comm,
            "MPI_ERR_COMM",
            &[
                Error::InvalidComm { site: site() },
                Error::CommOrder {
                    site: site(),
                    order,
                },
            ],
        );
    }

    #[test]
    fn errors_class_truncate_is_mpi_err_truncate() {
        let e = Error::Truncate {
            site: site(),
            message_bytes: 16,
            buffer_bytes: 8,
        };
        all_in(ErrorClass::Truncate, "MPI_ERR_TRUNCATE", &[e]);
    }

    #[test]
    fn errors_class_buffer_is_mpi_err_buffer() {
        all_in(
            ErrorClass::Buffer,
            "MPI_ERR_BUFFER",
            &[
                Error::BufferOverflow {
                    site: site(),
                    requested: 40,
                    attached: 64,
                    used: 32,
                },
                Error::BufferAlreadyAttached {
                    site: site(),
                    attached: 64,
                },
                Error::NoBufferAttached { site: site() },
            ],
        );
    }

    #[test]
    fn errors_class_request_is_mpi_err_request() {
        all_in(
            ErrorClass::Request,
            "MPI_ERR_REQUEST",
            &[
                Error::RequestActive { site: site() },
                Error::InvalidRequest { site: site() },
            ],
        );
    }

    #[test]
    fn errors_class_arg_is_mpi_err_arg() {
        let e = Error::InvalidArgument { what: what() };
        all_in(ErrorClass::Arg, "MPI_ERR_ARG", &[e]);
    }

    #[test]
    fn errors_class_pending_is_mpi_err_pending() {
        let e = Error::PendingAtExit {
            rank: 0,
            time_ns: Some(5),
            requests: Vec::new(),
        };
        all_in(ErrorClass::Pending, "MPI_ERR_PENDING", &[e]);
    }

    #[test]
    fn errors_class_no_mem_is_mpi_err_no_mem() {
        let e = Error::NoMemory { what: what() };
        all_in(ErrorClass::NoMem, "MPI_ERR_NO_MEM", &[e]);
    }

    #[test]
    fn errors_class_io_is_mpi_err_io() {
        let e = Error::Io { what: what() };
        all_in(ErrorClass::Io, "MPI_ERR_IO", &[e]);
    }

    #[test]
    fn errors_class_unsupported_is_mpi_err_unsupported_operation() {
        let e = Error::Unsupported { what: what() };
        all_in(
            ErrorClass::UnsupportedOperation,
            "MPI_ERR_UNSUPPORTED_OPERATION",
            &[e],
        );
    }

    #[test]
    fn errors_class_intern_is_mpi_err_intern() {
        let e = Error::Internal { what: what() };
        all_in(ErrorClass::Intern, "MPI_ERR_INTERN", &[e]);
    }

    #[test]
    fn errors_class_proc_aborted_is_mpi_err_proc_aborted() {
        all_in(
            ErrorClass::ProcAborted,
            "MPI_ERR_PROC_ABORTED",
            &[
                Error::Aborted {
                    rank: 0,
                    cause: what(),
                },
                Error::Abort {
                    rank: 1,
                    code: 3,
                    time_ns: None,
                },
            ],
        );
    }

    #[test]
    fn errors_class_other_is_mpi_err_other() {
        let deadlock = DeadlockReport::new(Vec::new(), 2, &|_| false);
        let livelock = LivelockReport {
            from_ns: 0,
            to_ns: 10,
            limit_ns: 10,
            ranks: Vec::new(),
        };
        all_in(
            ErrorClass::Other,
            "MPI_ERR_OTHER",
            &[
                Error::ReadyNotPosted {
                    site: site(),
                    receiver: 0,
                },
                Error::RunEnded { site: site() },
                Error::ForeignRank {
                    site: site(),
                    running: 0,
                },
                Error::Deadlock {
                    report: Box::new(deadlock),
                },
                Error::Livelock {
                    report: Box::new(livelock),
                },
                Error::TimeOverflow {
                    rank: 0,
                    time_ns: u64::MAX,
                    what: what(),
                },
                Error::Interrupted {
                    signal: Signal::Interrupt,
                    time_ns: None,
                },
                Error::program("the program's own"),
            ],
        );
    }

    #[test]
    fn errors_classes_have_distinct_mpi_names() {
        let mut names: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.mpi_name()).collect();
        assert!(names.iter().all(|n| n.starts_with("MPI_ERR_")), "{names:?}");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorClass::ALL.len());
        for c in ErrorClass::ALL {
            assert_eq!(c.to_string(), c.mpi_name());
        }
    }
}
