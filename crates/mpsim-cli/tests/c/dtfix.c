/* Behaviours a run of an external MPI test suite found missing or wrong, each checked against
 * what MPI (and every MPI implementation) gives: struct datatypes padded like the C struct
 * they describe, MPI_Get_elements on partial elements of mixed types, a receive from
 * MPI_PROC_NULL with MPI_DATATYPE_NULL, MPI_Request_get_status polled until the request
 * completes, a receive freed while active, MPI_Alltoallw and MPI_Ialltoallw, the MPI_Count
 * (_x) queries, the status setters, reductions on long double, the names of predefined
 * datatypes, empty blocks far away, freed datatype handles. Rank 0 prints "dtfix: ok". Any number of ranks. */
#include <limits.h>
#include <stdlib.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

struct ic { int i; char c; };
struct csi { char a; short b; int c; };
struct di { double d; int i; };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    int active = peer < size;

    /* A struct {int; char} has the extent of the C struct: an array of them is sent whole. */
    MPI_Datatype t_ic, t_csi, t_di;
    int len[3] = {1, 1, 1};
    MPI_Aint d_ic[2] = {offsetof(struct ic, i), offsetof(struct ic, c)};
    MPI_Datatype ty_ic[2] = {MPI_INT, MPI_CHAR};
    MPI_Type_create_struct(2, len, d_ic, ty_ic, &t_ic);
    MPI_Type_commit(&t_ic);
    MPI_Aint lb, extent;
    int sz;
    MPI_Type_get_extent(t_ic, &lb, &extent);
    MPI_Type_size(t_ic, &sz);
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(struct ic) && sz == 5, "struct {int; char} extent");
    MPI_Aint d_di[2] = {offsetof(struct di, d), offsetof(struct di, i)};
    MPI_Datatype ty_di[2] = {MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(2, len, d_di, ty_di, &t_di);
    MPI_Type_commit(&t_di);
    MPI_Aint e_pair, e_di;
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &e_pair);
    MPI_Type_get_extent(t_di, &lb, &e_di);
    CHECK(e_di == (MPI_Aint)sizeof(struct di) && e_pair == e_di, "struct {double; int} extent is MPI_DOUBLE_INT's");
    MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &extent);
    MPI_Type_size(MPI_LONG_DOUBLE_INT, &sz);
    CHECK(extent == (MPI_Aint)sizeof(struct { long double v; int i; }) && sz == (int)sizeof(long double) + 4, "MPI_LONG_DOUBLE_INT");
    struct ic out[6], in[6];
    for (int k = 0; k < 6; k++) { out[k].i = 100 * rank + k; out[k].c = (char)('a' + k); in[k].i = -1; in[k].c = 0; }
    if (active) {
        MPI_Sendrecv(out, 6, t_ic, peer, 1, in, 6, t_ic, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < 6; k++) CHECK(in[k].i == 100 * peer + k && in[k].c == 'a' + k, "array of structs");
    }

    /* MPI_Get_elements counts primitives of mixed sizes, whole elements and a part of one. */
    MPI_Aint d_csi[3] = {offsetof(struct csi, a), offsetof(struct csi, b), offsetof(struct csi, c)};
    MPI_Datatype ty_csi[3] = {MPI_CHAR, MPI_SHORT, MPI_INT};
    MPI_Type_create_struct(3, len, d_csi, ty_csi, &t_csi);
    MPI_Type_commit(&t_csi);
    struct csi s3[3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, r3[3];
    if (active) {
        /* 2 whole elements (7 bytes each) and the char and short of a third: 3 bytes. */
        MPI_Status st;
        if (rank % 2 == 0) {
            MPI_Send(s3, 17, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            MPI_Recv(r3, 3, t_csi, peer, 2, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(r3, 3, t_csi, peer, 2, MPI_COMM_WORLD, &st);
            MPI_Send(s3, 17, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        }
        int n = -1, c = -1;
        MPI_Get_elements(&st, t_csi, &n);
        MPI_Get_count(&st, t_csi, &c);
        CHECK(n == 8, "Get_elements of 2 structs and a part of one");
        CHECK(c == MPI_UNDEFINED, "Get_count of a partial element");
    }

    /* A receive from MPI_PROC_NULL with MPI_DATATYPE_NULL completes at once. */
    MPI_Request r;
    MPI_Status st;
    MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Irecv from MPI_PROC_NULL");
    MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Recv from MPI_PROC_NULL");

    /* MPI_Request_get_status, polled, sees the receive complete and leaves the request for
     * the wait; the data is there once it says so. */
    if (active) {
        int got = -1, sent = 40 + rank, flag = 0, polls = 0;
        MPI_Irecv(&got, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &r);
        MPI_Send(&sent, 1, MPI_INT, peer, 4, MPI_COMM_WORLD);
        while (!flag && polls < 1000000) {
            MPI_Request_get_status(r, &flag, &st);
            polls++;
        }
        CHECK(flag && got == 40 + peer && st.MPI_SOURCE == peer && st.MPI_TAG == 4, "Request_get_status completes");
        CHECK(r != MPI_REQUEST_NULL, "Request_get_status keeps the request");
        MPI_Request_get_status(r, &flag, &st);
        CHECK(flag, "Request_get_status again");
        MPI_Wait(&r, &st);
        CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == peer, "the wait after Request_get_status");
    }
    {
        int y = -1, one = 1, flag = 0;
        MPI_Iallreduce(&one, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        while (!flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
        CHECK(y == size, "Request_get_status on a nonblocking collective");
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }

    /* A receive freed while active completes on its own; MPI_Finalize does not count it. */
    if (active) {
        int late = -1, v = 5;
        MPI_Irecv(&late, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL, "Request_free sets the handle null");
        MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
    }

    /* MPI_Alltoallw: to rank i, 2 ints as MPI_INT from byte offset 64*i; from rank i, one
     * contiguous pair of ints at byte offset 64*i. */
    {
        int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
        int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
        MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * size), *rts = malloc(sizeof(MPI_Datatype) * size);
        int *sb = malloc(64 * size), *rb = malloc(64 * size);
        MPI_Datatype pairs;
        MPI_Type_contiguous(2, MPI_INT, &pairs);
        MPI_Type_commit(&pairs);
        for (int i = 0; i < size; i++) {
            sc[i] = 2; sd[i] = 64 * i; sts[i] = MPI_INT;      /* 2 ints to rank i */
            rc[i] = 1; rd[i] = 64 * i; rts[i] = pairs;        /* received as one pair */
            sb[16 * i] = 1000 * rank + i; sb[16 * i + 1] = -(1000 * rank + i);
            rb[16 * i] = rb[16 * i + 1] = rb[16 * i + 2] = -5;
        }
        MPI_Alltoallw(sb, sc, sd, sts, rb, rc, rd, rts, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++)
            CHECK(rb[16 * i] == 1000 * i + rank && rb[16 * i + 1] == -(1000 * i + rank) && rb[16 * i + 2] == -5, "Alltoallw");
        for (int i = 0; i < 16 * size; i++) rb[i] = -5;
        MPI_Ialltoallw(sb, sc, sd, sts, rb, rc, rd, rts, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++)
            CHECK(rb[16 * i] == 1000 * i + rank && rb[16 * i + 1] == -(1000 * i + rank), "Ialltoallw");
        MPI_Type_free(&pairs);
        free(sc); free(sd); free(rc); free(rd); free(sts); free(rts); free(sb); free(rb);
    }

    /* The MPI_Count queries and the status setters. */
    {
        MPI_Count csize, clb, cext, celem;
        MPI_Type_size_x(t_csi, &csize);
        MPI_Type_get_extent_x(t_csi, &clb, &cext);
        CHECK(csize == 7 && clb == 0 && cext == (MPI_Count)sizeof(struct csi), "Type_size_x, Type_get_extent_x");
        MPI_Status s;
        MPI_Status_set_elements(&s, t_csi, 5);
        int e = -1, cnt = -1;
        MPI_Get_elements(&s, t_csi, &e);
        MPI_Get_count(&s, t_csi, &cnt);
        CHECK(e == 5 && cnt == MPI_UNDEFINED, "Status_set_elements: 1 struct and 2 of its 3 parts");
        MPI_Status_set_elements_x(&s, MPI_INT, 6);
        MPI_Get_elements_x(&s, MPI_INT, &celem);
        MPI_Get_count(&s, MPI_INT, &cnt);
        CHECK(celem == 6 && cnt == 6, "Status_set_elements_x, Get_elements_x");
        int flag = -1;
        MPI_Status_set_cancelled(&s, 1);
        MPI_Test_cancelled(&s, &flag);
        CHECK(flag == 1, "Status_set_cancelled");
    }

    /* Reductions on long double: a sum that needs the 64-bit significand (1 + k * 2^-60 is
     * not a double), the maximum, and MPI_MINLOC on MPI_LONG_DOUBLE_INT. */
    {
        long double tiny = 1.0L / 1152921504606846976.0L; /* 2^-60 */
        long double mine = (rank == 0 ? 1.0L : 0.0L) + tiny * (rank + 1), sum = 0, expect = 1.0L;
        for (int i = 0; i < size; i++) expect += tiny * (i + 1);
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == expect && sum != 1.0L, "long double sum");
        long double big = -1;
        MPI_Iallreduce(&mine, &big, 1, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(big == 1.0L + tiny, "long double max");
        struct { long double v; int i; } in2 = {(long double)((rank * 7) % 5) - 2.5L, rank}, out2;
        MPI_Allreduce(&in2, &out2, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
        int best = 0;
        for (int i = 1; i < size; i++) if ((i * 7) % 5 < (best * 7) % 5) best = i;
        CHECK(out2.i == best && out2.v == (long double)((best * 7) % 5) - 2.5L, "long double minloc");
    }

    /* A handle of two names has the standard's name for the type (MPI_LONG_LONG is named a
     * synonym of MPI_LONG_LONG_INT, MPI_C_FLOAT_COMPLEX of MPI_C_COMPLEX); a predefined type
     * may be renamed, and only that one changes. */
    char name[MPI_MAX_OBJECT_NAME];
    int namelen = 0;
    MPI_Type_get_name(MPI_LONG_LONG, name, &namelen);
    CHECK(!strcmp(name, "MPI_LONG_LONG_INT") && namelen == 17, "MPI_LONG_LONG's name");
    MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &namelen);
    CHECK(!strcmp(name, "MPI_C_COMPLEX"), "MPI_C_FLOAT_COMPLEX's name");
    MPI_Type_get_name(MPI_INTEGER16, name, &namelen);
    CHECK(!strcmp(name, "MPI_INTEGER16"), "MPI_INTEGER16's name");
    CHECK(MPI_Type_set_name(MPI_INT, "int") == MPI_SUCCESS, "renaming MPI_INT");
    MPI_Type_get_name(MPI_INT, name, &namelen);
    CHECK(!strcmp(name, "int") && namelen == 3, "MPI_INT renamed");
    MPI_Type_get_name(MPI_UNSIGNED, name, &namelen);
    CHECK(!strcmp(name, "MPI_UNSIGNED"), "another type keeps its name");

    /* Blocks of no element are no part of the type map, wherever they are: only the middle
     * block of an hindexed type with empty blocks at the ends of the address space sets its
     * bounds and its data. A freed handle is no datatype any more (MPI_ERR_TYPE), even where
     * another MPI would hand the same number to the next new type. */
    {
        int lens[3] = {0, 4, 0};
        MPI_Aint at[3] = {(MPI_Aint)LLONG_MAX, 2 * sizeof(int), (MPI_Aint)LLONG_MAX};
        MPI_Datatype mid, gone;
        CHECK(MPI_Type_create_hindexed(3, lens, at, MPI_INT, &mid) == MPI_SUCCESS, "hindexed with empty far blocks");
        MPI_Type_commit(&mid);
        MPI_Type_get_extent(mid, &lb, &extent);
        CHECK(lb == 2 * (MPI_Aint)sizeof(int) && extent == 4 * (MPI_Aint)sizeof(int), "its bounds");
        int src[10], packed[4] = {0}, pos = 0;
        for (int i = 0; i < 10; i++) src[i] = i + 1;
        MPI_Pack(src, 1, mid, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD);
        CHECK(pos == 16 && packed[0] == 3 && packed[3] == 6, "its data");
        gone = mid;
        MPI_Type_free(&mid);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Type_size(gone, &sz), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "a freed datatype handle");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }

    MPI_Type_free(&t_ic);
    MPI_Type_free(&t_di);
    MPI_Type_free(&t_csi);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(bad ? "dtfix: %d failures\n" : "dtfix: ok\n", bad);
    MPI_Finalize();
    return bad != 0;
}
