/* mpi.h of mpsim: the MPI C API to the MPI standard ABI (MPI 5.0), for programs built with
 * `mpsim cc` and run by `mpsim run`. Written for mpsim; the values are the standard ABI's.
 * Functions mpsim does not implement yet are declared and link; they return MPI_ERR_OTHER. */
#ifndef MPSIM_MPI_H
#define MPSIM_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 5
#define MPI_SUBVERSION 0
#define MPSIM_MPI 1

typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef int64_t MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int mpi_internal[5];
} MPI_Status;

typedef struct MPI_ABI_Op *MPI_Op;
typedef struct MPI_ABI_Comm *MPI_Comm;
typedef struct MPI_ABI_Group *MPI_Group;
typedef struct MPI_ABI_Win *MPI_Win;
typedef struct MPI_ABI_File *MPI_File;
typedef struct MPI_ABI_Session *MPI_Session;
typedef struct MPI_ABI_Message *MPI_Message;
typedef struct MPI_ABI_Info *MPI_Info;
typedef struct MPI_ABI_Errhandler *MPI_Errhandler;
typedef struct MPI_ABI_Request *MPI_Request;
typedef struct MPI_ABI_Datatype *MPI_Datatype;

#define MPI_OP_NULL     ((MPI_Op)0x020)
#define MPI_SUM         ((MPI_Op)0x021)
#define MPI_MIN         ((MPI_Op)0x022)
#define MPI_MAX         ((MPI_Op)0x023)
#define MPI_PROD        ((MPI_Op)0x024)
#define MPI_BAND        ((MPI_Op)0x028)
#define MPI_BOR         ((MPI_Op)0x029)
#define MPI_BXOR        ((MPI_Op)0x02a)
#define MPI_LAND        ((MPI_Op)0x030)
#define MPI_LOR         ((MPI_Op)0x031)
#define MPI_LXOR        ((MPI_Op)0x032)
#define MPI_MINLOC      ((MPI_Op)0x038)
#define MPI_MAXLOC      ((MPI_Op)0x039)
#define MPI_REPLACE     ((MPI_Op)0x03c)
#define MPI_NO_OP       ((MPI_Op)0x03d)

#define MPI_COMM_NULL   ((MPI_Comm)0x100)
#define MPI_COMM_WORLD  ((MPI_Comm)0x101)
#define MPI_COMM_SELF   ((MPI_Comm)0x102)
#define MPI_GROUP_NULL  ((MPI_Group)0x108)
#define MPI_GROUP_EMPTY ((MPI_Group)0x109)
#define MPI_WIN_NULL    ((MPI_Win)0x110)
#define MPI_FILE_NULL   ((MPI_File)0x118)
#define MPI_SESSION_NULL ((MPI_Session)0x120)
#define MPI_MESSAGE_NULL ((MPI_Message)0x128)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x129)
#define MPI_INFO_NULL   ((MPI_Info)0x130)
#define MPI_INFO_ENV    ((MPI_Info)0x131)
#define MPI_ERRHANDLER_NULL  ((MPI_Errhandler)0x140)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x141)
#define MPI_ERRORS_ABORT     ((MPI_Errhandler)0x142)
#define MPI_ERRORS_RETURN    ((MPI_Errhandler)0x143)
#define MPI_REQUEST_NULL ((MPI_Request)0x180)

#define MPI_DATATYPE_NULL      ((MPI_Datatype)0x200)
#define MPI_AINT               ((MPI_Datatype)0x201)
#define MPI_COUNT              ((MPI_Datatype)0x202)
#define MPI_OFFSET             ((MPI_Datatype)0x203)
#define MPI_PACKED             ((MPI_Datatype)0x207)
#define MPI_SHORT              ((MPI_Datatype)0x208)
#define MPI_INT                ((MPI_Datatype)0x209)
#define MPI_LONG               ((MPI_Datatype)0x20a)
#define MPI_LONG_LONG          ((MPI_Datatype)0x20b)
#define MPI_LONG_LONG_INT      MPI_LONG_LONG
#define MPI_UNSIGNED_SHORT     ((MPI_Datatype)0x20c)
#define MPI_UNSIGNED           ((MPI_Datatype)0x20d)
#define MPI_UNSIGNED_LONG      ((MPI_Datatype)0x20e)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x20f)
#define MPI_FLOAT              ((MPI_Datatype)0x210)
#define MPI_C_FLOAT_COMPLEX    ((MPI_Datatype)0x212)
#define MPI_C_COMPLEX          MPI_C_FLOAT_COMPLEX
#define MPI_CXX_FLOAT_COMPLEX  ((MPI_Datatype)0x213)
#define MPI_DOUBLE             ((MPI_Datatype)0x214)
#define MPI_C_DOUBLE_COMPLEX   ((MPI_Datatype)0x216)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x217)
#define MPI_LOGICAL            ((MPI_Datatype)0x218)
#define MPI_INTEGER            ((MPI_Datatype)0x219)
#define MPI_REAL               ((MPI_Datatype)0x21a)
#define MPI_COMPLEX            ((MPI_Datatype)0x21b)
#define MPI_DOUBLE_PRECISION   ((MPI_Datatype)0x21c)
#define MPI_DOUBLE_COMPLEX     ((MPI_Datatype)0x21d)
#define MPI_LONG_DOUBLE        ((MPI_Datatype)0x220)
#define MPI_C_LONG_DOUBLE_COMPLEX   ((MPI_Datatype)0x224)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x225)
#define MPI_FLOAT_INT          ((MPI_Datatype)0x228)
#define MPI_DOUBLE_INT         ((MPI_Datatype)0x229)
#define MPI_LONG_INT           ((MPI_Datatype)0x22a)
#define MPI_2INT               ((MPI_Datatype)0x22b)
#define MPI_SHORT_INT          ((MPI_Datatype)0x22c)
#define MPI_LONG_DOUBLE_INT    ((MPI_Datatype)0x22d)
#define MPI_2REAL              ((MPI_Datatype)0x230)
#define MPI_2DOUBLE_PRECISION  ((MPI_Datatype)0x231)
#define MPI_2INTEGER           ((MPI_Datatype)0x232)
#define MPI_C_BOOL             ((MPI_Datatype)0x238)
#define MPI_CXX_BOOL           ((MPI_Datatype)0x239)
#define MPI_WCHAR              ((MPI_Datatype)0x23c)
#define MPI_INT8_T             ((MPI_Datatype)0x240)
#define MPI_UINT8_T            ((MPI_Datatype)0x241)
#define MPI_CHAR               ((MPI_Datatype)0x243)
#define MPI_SIGNED_CHAR        ((MPI_Datatype)0x244)
#define MPI_UNSIGNED_CHAR      ((MPI_Datatype)0x245)
#define MPI_BYTE               ((MPI_Datatype)0x247)
#define MPI_INT16_T            ((MPI_Datatype)0x248)
#define MPI_UINT16_T           ((MPI_Datatype)0x249)
#define MPI_INT32_T            ((MPI_Datatype)0x250)
#define MPI_UINT32_T           ((MPI_Datatype)0x251)
#define MPI_INT64_T            ((MPI_Datatype)0x258)
#define MPI_UINT64_T           ((MPI_Datatype)0x259)
#define MPI_INTEGER1           ((MPI_Datatype)0x2c1)
#define MPI_CHARACTER          ((MPI_Datatype)0x21e)
#define MPI_INTEGER2           ((MPI_Datatype)0x2c9)
#define MPI_INTEGER4           ((MPI_Datatype)0x2d1)
#define MPI_REAL4              ((MPI_Datatype)0x2d2)
#define MPI_INTEGER8           ((MPI_Datatype)0x2d9)
#define MPI_REAL8              ((MPI_Datatype)0x2da)
#define MPI_COMPLEX8           ((MPI_Datatype)0x2db)
#define MPI_INTEGER16          ((MPI_Datatype)0x2e1)
#define MPI_REAL16             ((MPI_Datatype)0x2e2)
#define MPI_COMPLEX16          ((MPI_Datatype)0x2e3)
#define MPI_COMPLEX32          ((MPI_Datatype)0x2eb)

enum {
    MPI_SUCCESS = 0, MPI_ERR_BUFFER = 1, MPI_ERR_COUNT = 2, MPI_ERR_TYPE = 3, MPI_ERR_TAG = 4,
    MPI_ERR_COMM = 5, MPI_ERR_RANK = 6, MPI_ERR_REQUEST = 7, MPI_ERR_ROOT = 8,
    MPI_ERR_GROUP = 9, MPI_ERR_OP = 10, MPI_ERR_TOPOLOGY = 11, MPI_ERR_DIMS = 12,
    MPI_ERR_ARG = 13, MPI_ERR_UNKNOWN = 14, MPI_ERR_TRUNCATE = 15, MPI_ERR_OTHER = 16,
    MPI_ERR_INTERN = 17, MPI_ERR_PENDING = 18, MPI_ERR_IN_STATUS = 19, MPI_ERR_ACCESS = 20,
    MPI_ERR_AMODE = 21, MPI_ERR_ASSERT = 22, MPI_ERR_BAD_FILE = 23, MPI_ERR_BASE = 24,
    MPI_ERR_CONVERSION = 25, MPI_ERR_DISP = 26, MPI_ERR_DUP_DATAREP = 27,
    MPI_ERR_FILE_EXISTS = 28, MPI_ERR_FILE_IN_USE = 29, MPI_ERR_FILE = 30,
    MPI_ERR_INFO_KEY = 31, MPI_ERR_INFO_NOKEY = 32, MPI_ERR_INFO_VALUE = 33, MPI_ERR_INFO = 34,
    MPI_ERR_IO = 35, MPI_ERR_KEYVAL = 36, MPI_ERR_LOCKTYPE = 37, MPI_ERR_NAME = 38,
    MPI_ERR_NO_MEM = 39, MPI_ERR_NOT_SAME = 40, MPI_ERR_NO_SPACE = 41,
    MPI_ERR_NO_SUCH_FILE = 42, MPI_ERR_PORT = 43, MPI_ERR_QUOTA = 44, MPI_ERR_READ_ONLY = 45,
    MPI_ERR_RMA_ATTACH = 46, MPI_ERR_RMA_CONFLICT = 47, MPI_ERR_RMA_RANGE = 48,
    MPI_ERR_RMA_SHARED = 49, MPI_ERR_RMA_SYNC = 50, MPI_ERR_SERVICE = 51, MPI_ERR_SIZE = 52,
    MPI_ERR_SPAWN = 53, MPI_ERR_UNSUPPORTED_DATAREP = 54, MPI_ERR_UNSUPPORTED_OPERATION = 55,
    MPI_ERR_WIN = 56, MPI_ERR_RMA_FLAVOR = 57, MPI_ERR_PROC_ABORTED = 58,
    MPI_ERR_VALUE_TOO_LARGE = 59, MPI_ERR_SESSION = 60, MPI_ERR_ERRHANDLER = 61,
    MPI_ERR_ABI = 62,
    MPI_ERR_LASTCODE = 16383
};

#define MPI_BOTTOM           ((void *)0)
#define MPI_IN_PLACE         ((void *)1)
#define MPI_BUFFER_AUTOMATIC ((void *)2)
#define MPI_ARGV_NULL        ((char **)0)
#define MPI_ARGVS_NULL       ((char ***)0)
#define MPI_ERRCODES_IGNORE  ((int *)0)
#define MPI_STATUS_IGNORE    ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE  ((MPI_Status *)0)
#define MPI_UNWEIGHTED       ((int *)10)
#define MPI_WEIGHTS_EMPTY    ((int *)11)

#define MPI_BSEND_OVERHEAD 512
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_INFO_KEY 256
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_PORT_NAME 1024
#define MPI_MAX_PROCESSOR_NAME 256

enum { MPI_ANY_SOURCE = -1, MPI_ANY_TAG = -2, MPI_PROC_NULL = -3, MPI_ROOT = -4,
       MPI_UNDEFINED = -32766 };
enum {
    MPI_THREAD_SINGLE = 0, MPI_THREAD_FUNNELED = 1024, MPI_THREAD_SERIALIZED = 2048,
    MPI_THREAD_MULTIPLE = 4096
};
enum { MPI_ORDER_C = 12, MPI_ORDER_FORTRAN = 15 };
enum {
    MPI_DISTRIBUTE_NONE = 16, MPI_DISTRIBUTE_BLOCK = 17, MPI_DISTRIBUTE_CYCLIC = 18,
    MPI_DISTRIBUTE_DFLT_DARG = 19
};
enum {
    MPI_COMBINER_NAMED = 101, MPI_COMBINER_DUP = 102, MPI_COMBINER_CONTIGUOUS = 103,
    MPI_COMBINER_VECTOR = 104, MPI_COMBINER_HVECTOR = 105, MPI_COMBINER_INDEXED = 106,
    MPI_COMBINER_HINDEXED = 107, MPI_COMBINER_INDEXED_BLOCK = 108,
    MPI_COMBINER_HINDEXED_BLOCK = 109, MPI_COMBINER_STRUCT = 110, MPI_COMBINER_SUBARRAY = 111,
    MPI_COMBINER_DARRAY = 112, MPI_COMBINER_F90_REAL = 113, MPI_COMBINER_F90_COMPLEX = 114,
    MPI_COMBINER_F90_INTEGER = 115, MPI_COMBINER_RESIZED = 116, MPI_COMBINER_VALUE_INDEX = 117
};
enum {
    MPI_TYPECLASS_INTEGER = 192, MPI_TYPECLASS_REAL = 193, MPI_TYPECLASS_COMPLEX = 194
};
enum { MPI_IDENT = 201, MPI_CONGRUENT = 202, MPI_SIMILAR = 203, MPI_UNEQUAL = 204 };
enum { MPI_CART = 211, MPI_GRAPH = 212, MPI_DIST_GRAPH = 213 };
enum {
    MPI_COMM_TYPE_SHARED = 221, MPI_COMM_TYPE_HW_UNGUIDED = 222, MPI_COMM_TYPE_HW_GUIDED = 223,
    MPI_COMM_TYPE_RESOURCE_GUIDED = 224
};
enum { MPI_LOCK_EXCLUSIVE = 301, MPI_LOCK_SHARED = 302 };
enum {
    MPI_MODE_APPEND = 1, MPI_MODE_CREATE = 2, MPI_MODE_DELETE_ON_CLOSE = 4, MPI_MODE_EXCL = 8,
    MPI_MODE_RDONLY = 16, MPI_MODE_RDWR = 32, MPI_MODE_SEQUENTIAL = 64,
    MPI_MODE_UNIQUE_OPEN = 128, MPI_MODE_WRONLY = 256, MPI_MODE_NOCHECK = 1024,
    MPI_MODE_NOPRECEDE = 2048, MPI_MODE_NOPUT = 4096, MPI_MODE_NOSTORE = 8192,
    MPI_MODE_NOSUCCEED = 16384
};
enum {
    MPI_WIN_FLAVOR_CREATE = 311, MPI_WIN_FLAVOR_ALLOCATE = 312, MPI_WIN_FLAVOR_DYNAMIC = 313,
    MPI_WIN_FLAVOR_SHARED = 314, MPI_WIN_UNIFIED = 321, MPI_WIN_SEPARATE = 322,
    MPI_WIN_BASE = 601, MPI_WIN_DISP_UNIT = 602, MPI_WIN_SIZE = 603,
    MPI_WIN_CREATE_FLAVOR = 604, MPI_WIN_MODEL = 605
};
enum { MPI_SEEK_CUR = 401, MPI_SEEK_END = 402, MPI_SEEK_SET = 403 };
enum {
    MPI_KEYVAL_INVALID = 0, MPI_TAG_UB = 501, MPI_IO = 502, MPI_HOST = 503,
    MPI_WTIME_IS_GLOBAL = 504, MPI_APPNUM = 505, MPI_LASTUSEDCODE = 506,
    MPI_UNIVERSE_SIZE = 507
};

typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *error_code, ...);

/* The standard ABI's callback constants (attribute copy and delete functions). */
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0x0)
#define MPI_COMM_DUP_FN         ((MPI_Comm_copy_attr_function *)0x1)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0x0)
#define MPI_TYPE_NULL_COPY_FN   ((MPI_Type_copy_attr_function *)0x0)
#define MPI_TYPE_DUP_FN         ((MPI_Type_copy_attr_function *)0x1)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0x0)
#define MPI_NULL_COPY_FN        ((MPI_Copy_function *)0x0)
#define MPI_DUP_FN              ((MPI_Copy_function *)0x1)
#define MPI_NULL_DELETE_FN      ((MPI_Delete_function *)0x0)

#define MPSIM_DECLARE(ret, name, args) ret MPI_##name args; ret PMPI_##name args;

MPSIM_DECLARE(int, Init, (int *argc, char ***argv))
MPSIM_DECLARE(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
MPSIM_DECLARE(int, Query_thread, (int *provided))
MPSIM_DECLARE(int, Is_thread_main, (int *flag))
MPSIM_DECLARE(int, Initialized, (int *flag))
MPSIM_DECLARE(int, Finalized, (int *flag))
MPSIM_DECLARE(int, Finalize, (void))
MPSIM_DECLARE(int, Abort, (MPI_Comm comm, int errorcode))
MPSIM_DECLARE(int, Comm_rank, (MPI_Comm comm, int *rank))
MPSIM_DECLARE(int, Comm_size, (MPI_Comm comm, int *size))
MPSIM_DECLARE(double, Wtime, (void))
MPSIM_DECLARE(double, Wtick, (void))
MPSIM_DECLARE(int, Get_processor_name, (char *name, int *resultlen))
MPSIM_DECLARE(int, Get_version, (int *version, int *subversion))
MPSIM_DECLARE(int, Get_library_version, (char *version, int *resultlen))
MPSIM_DECLARE(int, Error_string, (int errorcode, char *string, int *resultlen))
MPSIM_DECLARE(int, Error_class, (int errorcode, int *errorclass))
MPSIM_DECLARE(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
MPSIM_DECLARE(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Errhandler_free, (MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Isendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Isendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
MPSIM_DECLARE(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
MPSIM_DECLARE(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status))
MPSIM_DECLARE(int, Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
MPSIM_DECLARE(int, Imrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
MPSIM_DECLARE(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
MPSIM_DECLARE(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
MPSIM_DECLARE(int, Buffer_attach, (void *buffer, int size))
MPSIM_DECLARE(int, Buffer_detach, (void *buffer_addr, int *size))
MPSIM_DECLARE(int, Send_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ssend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Bsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Rsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Recv_init, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Start, (MPI_Request *request))
MPSIM_DECLARE(int, Startall, (int count, MPI_Request array_of_requests[]))
MPSIM_DECLARE(int, Wait, (MPI_Request *request, MPI_Status *status))
MPSIM_DECLARE(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
MPSIM_DECLARE(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]))
MPSIM_DECLARE(int, Testall, (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]))
MPSIM_DECLARE(int, Waitany, (int count, MPI_Request array_of_requests[], int *index, MPI_Status *status))
MPSIM_DECLARE(int, Testany, (int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status))
MPSIM_DECLARE(int, Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
MPSIM_DECLARE(int, Testsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
MPSIM_DECLARE(int, Request_free, (MPI_Request *request))
MPSIM_DECLARE(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
MPSIM_DECLARE(int, Request_get_status_all, (int count, const MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]))
MPSIM_DECLARE(int, Request_get_status_any, (int count, const MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status))
MPSIM_DECLARE(int, Request_get_status_some, (int incount, const MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
MPSIM_DECLARE(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype))
MPSIM_DECLARE(MPI_Fint, Comm_c2f, (MPI_Comm comm))
MPSIM_DECLARE(MPI_Comm, Comm_f2c, (MPI_Fint comm))
MPSIM_DECLARE(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
MPSIM_DECLARE(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
MPSIM_DECLARE(MPI_Fint, Group_c2f, (MPI_Group group))
MPSIM_DECLARE(MPI_Group, Group_f2c, (MPI_Fint group))
MPSIM_DECLARE(MPI_Fint, Request_c2f, (MPI_Request request))
MPSIM_DECLARE(MPI_Request, Request_f2c, (MPI_Fint request))
MPSIM_DECLARE(MPI_Fint, Op_c2f, (MPI_Op op))
MPSIM_DECLARE(MPI_Op, Op_f2c, (MPI_Fint op))
MPSIM_DECLARE(MPI_Fint, Info_c2f, (MPI_Info info))
MPSIM_DECLARE(MPI_Info, Info_f2c, (MPI_Fint info))
MPSIM_DECLARE(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
MPSIM_DECLARE(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
MPSIM_DECLARE(MPI_Fint, Message_c2f, (MPI_Message message))
MPSIM_DECLARE(MPI_Message, Message_f2c, (MPI_Fint message))
MPSIM_DECLARE(MPI_Fint, Win_c2f, (MPI_Win win))
MPSIM_DECLARE(MPI_Win, Win_f2c, (MPI_Fint win))
MPSIM_DECLARE(MPI_Fint, File_c2f, (MPI_File file))
MPSIM_DECLARE(MPI_File, File_f2c, (MPI_Fint file))
MPSIM_DECLARE(int, Cancel, (MPI_Request *request))
MPSIM_DECLARE(int, Test_cancelled, (const MPI_Status *status, int *flag))
MPSIM_DECLARE(int, Barrier, (MPI_Comm comm))
MPSIM_DECLARE(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
MPSIM_DECLARE(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))

/* MPI-4's large-count forms with scalar counts (the ones with count arrays are not here). */
MPSIM_DECLARE(int, Send_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Ssend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Bsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Rsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPSIM_DECLARE(int, Isend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Issend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ibsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Irsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Send_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ssend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Bsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Rsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Recv_init_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Sendrecv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Sendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPSIM_DECLARE(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
MPSIM_DECLARE(int, Imrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
MPSIM_DECLARE(int, Buffer_attach_c, (void *buffer, MPI_Count size))
MPSIM_DECLARE(int, Reduce_local_c, (const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op))
MPSIM_DECLARE(int, Bcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Ibcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Bcast_init_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Ireduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Allreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Iallreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Allreduce_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Scan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Iscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Scan_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Exscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Iexscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Exscan_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPSIM_DECLARE(int, Ireduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_scatter_block_init_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Gather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Igather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Gather_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Scatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPSIM_DECLARE(int, Iscatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Scatter_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Iallgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Allgather_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Ialltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Alltoall_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Neighbor_allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Neighbor_alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_hvector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Status_set_elements_c, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count))
MPSIM_DECLARE(int, Get_elements_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
MPSIM_DECLARE(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size))
MPSIM_DECLARE(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
MPSIM_DECLARE(int, Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
MPSIM_DECLARE(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
MPSIM_DECLARE(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size))
MPSIM_DECLARE(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size))
MPSIM_DECLARE(int, Pack_c, (const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm))
MPSIM_DECLARE(int, Unpack_c, (const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm))
MPSIM_DECLARE(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Bcast_init, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Allreduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Scan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Exscan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_scatter_init, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Reduce_scatter_block_init, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Gather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Scatter_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Gatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Scatterv_init, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Alltoallw_init, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPSIM_DECLARE(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPSIM_DECLARE(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
MPSIM_DECLARE(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request))
MPSIM_DECLARE(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm))
MPSIM_DECLARE(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
MPSIM_DECLARE(int, Intercomm_create_from_groups, (MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newintercomm))
MPSIM_DECLARE(int, Comm_create_from_group, (MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newcomm))
MPSIM_DECLARE(int, Comm_remote_size, (MPI_Comm comm, int *size))
MPSIM_DECLARE(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
MPSIM_DECLARE(int, Comm_free, (MPI_Comm *comm))
MPSIM_DECLARE(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
MPSIM_DECLARE(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
MPSIM_DECLARE(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
MPSIM_DECLARE(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
MPSIM_DECLARE(int, Comm_test_inter, (MPI_Comm comm, int *flag))
MPSIM_DECLARE(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag))
MPSIM_DECLARE(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val))
MPSIM_DECLARE(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
MPSIM_DECLARE(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *comm_copy_attr_fn, MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state))
MPSIM_DECLARE(int, Comm_free_keyval, (int *comm_keyval))
MPSIM_DECLARE(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag))
MPSIM_DECLARE(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val))
MPSIM_DECLARE(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
MPSIM_DECLARE(int, Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn, MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state))
MPSIM_DECLARE(int, Type_free_keyval, (int *type_keyval))
MPSIM_DECLARE(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
MPSIM_DECLARE(int, Add_error_class, (int *errorclass))
MPSIM_DECLARE(int, Add_error_code, (int errorclass, int *errorcode))
MPSIM_DECLARE(int, Add_error_string, (int errorcode, const char *string))
MPSIM_DECLARE(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
MPSIM_DECLARE(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
MPSIM_DECLARE(int, Type_get_envelope, (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner))
MPSIM_DECLARE(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]))
MPSIM_DECLARE(int, Type_create_subarray, (int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Group_size, (MPI_Group group, int *size))
MPSIM_DECLARE(int, Group_rank, (MPI_Group group, int *rank))
MPSIM_DECLARE(int, Group_free, (MPI_Group *group))
MPSIM_DECLARE(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
MPSIM_DECLARE(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
MPSIM_DECLARE(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
MPSIM_DECLARE(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
MPSIM_DECLARE(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MPSIM_DECLARE(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MPSIM_DECLARE(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MPSIM_DECLARE(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_indexed, (int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_hindexed, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_indexed_block, (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_struct, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_commit, (MPI_Datatype *datatype))
MPSIM_DECLARE(int, Type_free, (MPI_Datatype *datatype))
MPSIM_DECLARE(int, Type_size, (MPI_Datatype datatype, int *size))
MPSIM_DECLARE(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
MPSIM_DECLARE(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent))
MPSIM_DECLARE(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
MPSIM_DECLARE(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
MPSIM_DECLARE(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
MPSIM_DECLARE(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
MPSIM_DECLARE(int, Status_set_elements, (MPI_Status *status, MPI_Datatype datatype, int count))
MPSIM_DECLARE(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count))
MPSIM_DECLARE(int, Status_set_cancelled, (MPI_Status *status, int flag))
/* Removed from the standard in MPI-3.0; kept (as MPICH and Open MPI keep them) for older
 * programs. */
MPSIM_DECLARE(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
MPSIM_DECLARE(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
MPSIM_DECLARE(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
MPSIM_DECLARE(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
MPSIM_DECLARE(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_hindexed, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPSIM_DECLARE(int, Type_struct, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[], MPI_Datatype *newtype))
MPSIM_DECLARE(int, Address, (void *location, MPI_Aint *address))
MPSIM_DECLARE(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state))
MPSIM_DECLARE(int, Keyval_free, (int *keyval))
MPSIM_DECLARE(int, Errhandler_create, (MPI_Handler_function *function, MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
MPSIM_DECLARE(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
MPSIM_DECLARE(int, Attr_delete, (MPI_Comm comm, int keyval))
MPSIM_DECLARE(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))
MPSIM_DECLARE(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))
MPSIM_DECLARE(int, Get_address, (const void *location, MPI_Aint *address))
MPSIM_DECLARE(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm))
MPSIM_DECLARE(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm))
MPSIM_DECLARE(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))
MPSIM_DECLARE(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op))
MPSIM_DECLARE(int, Op_free, (MPI_Op *op))
MPSIM_DECLARE(int, Op_commutative, (MPI_Op op, int *commute))
MPSIM_DECLARE(int, Dims_create, (int nnodes, int ndims, int dims[]))
MPSIM_DECLARE(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart))
MPSIM_DECLARE(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
MPSIM_DECLARE(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
MPSIM_DECLARE(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
MPSIM_DECLARE(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
MPSIM_DECLARE(int, Cartdim_get, (MPI_Comm comm, int *ndims))
MPSIM_DECLARE(int, Topo_test, (MPI_Comm comm, int *status))
MPSIM_DECLARE(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
MPSIM_DECLARE(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int *index, const int *edges, int reorder, MPI_Comm *comm_graph))
MPSIM_DECLARE(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
MPSIM_DECLARE(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int *index, int *edges))
MPSIM_DECLARE(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
MPSIM_DECLARE(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int *neighbors))
MPSIM_DECLARE(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int *sources, const int *sourceweights, int outdegree, const int *destinations, const int *destweights, MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
MPSIM_DECLARE(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int *sources, const int *degrees, const int *destinations, const int *weights, MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
MPSIM_DECLARE(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
MPSIM_DECLARE(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int *sources, int *sourceweights, int maxoutdegree, int *destinations, int *destweights))
MPSIM_DECLARE(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MPSIM_DECLARE(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
MPSIM_DECLARE(int, Info_create, (MPI_Info *info))
MPSIM_DECLARE(int, Info_set, (MPI_Info info, const char *key, const char *value))
MPSIM_DECLARE(int, Info_free, (MPI_Info *info))
MPSIM_DECLARE(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
MPSIM_DECLARE(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value, int *flag))
MPSIM_DECLARE(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
MPSIM_DECLARE(int, Info_delete, (MPI_Info info, const char *key))
MPSIM_DECLARE(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
MPSIM_DECLARE(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
MPSIM_DECLARE(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
MPSIM_DECLARE(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
MPSIM_DECLARE(int, Free_mem, (void *base))
MPSIM_DECLARE(int, Pcontrol, (const int level, ...))

/* One-sided communication (docs/c.md): windows, fence, post/start/complete/wait and lock
 * epochs, put, get, accumulates and their request forms. Shared and dynamic windows are
 * declared so that programs that mention them build; they return MPI_ERR_OTHER and say so
 * once. */
MPSIM_DECLARE(int, Win_get_group, (MPI_Win win, MPI_Group *group))
MPSIM_DECLARE(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
MPSIM_DECLARE(int, Win_set_name, (MPI_Win win, const char *win_name))
MPSIM_DECLARE(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
MPSIM_DECLARE(int, Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
MPSIM_DECLARE(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
MPSIM_DECLARE(int, Win_call_errhandler, (MPI_Win win, int errorcode))
MPSIM_DECLARE(int, Win_test, (MPI_Win win, int *flag))
MPSIM_DECLARE(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
MPSIM_DECLARE(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
MPSIM_DECLARE(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
MPSIM_DECLARE(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
MPSIM_DECLARE(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
MPSIM_DECLARE(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
MPSIM_DECLARE(int, Win_detach, (MPI_Win win, const void *base))
MPSIM_DECLARE(int, Win_free, (MPI_Win *win))
MPSIM_DECLARE(int, Win_fence, (int assert, MPI_Win win))
MPSIM_DECLARE(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
MPSIM_DECLARE(int, Win_unlock, (int rank, MPI_Win win))
MPSIM_DECLARE(int, Win_lock_all, (int assert, MPI_Win win))
MPSIM_DECLARE(int, Win_unlock_all, (MPI_Win win))
MPSIM_DECLARE(int, Win_flush, (int rank, MPI_Win win))
MPSIM_DECLARE(int, Win_flush_all, (MPI_Win win))
MPSIM_DECLARE(int, Win_flush_local, (int rank, MPI_Win win))
MPSIM_DECLARE(int, Win_flush_local_all, (MPI_Win win))
MPSIM_DECLARE(int, Win_sync, (MPI_Win win))
MPSIM_DECLARE(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
MPSIM_DECLARE(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
MPSIM_DECLARE(int, Win_complete, (MPI_Win win))
MPSIM_DECLARE(int, Win_wait, (MPI_Win win))
MPSIM_DECLARE(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
MPSIM_DECLARE(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
MPSIM_DECLARE(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPSIM_DECLARE(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPSIM_DECLARE(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win))
MPSIM_DECLARE(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
MPSIM_DECLARE(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
MPSIM_DECLARE(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
MPSIM_DECLARE(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MPSIM_DECLARE(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))

#undef MPSIM_DECLARE

#ifdef __cplusplus
}
#endif
#endif /* MPSIM_MPI_H */
