/* One-sided communication (MPI RMA) against what MPI requires: windows made by MPI_Win_create
 * and MPI_Win_allocate and their attributes, group, name; MPI_Put, MPI_Get, MPI_Accumulate
 * (MPI_SUM, MPI_MAX, MPI_REPLACE), MPI_Get_accumulate, MPI_Fetch_and_op (MPI_NO_OP too),
 * MPI_Compare_and_swap in fence epochs, with derived datatypes at the origin and the target;
 * post/start/complete/wait and MPI_Win_test on a ring; lock/unlock (exclusive epochs that
 * must serialize), lock_all, flush, MPI_Rput/MPI_Rget; and, under MPI_ERRORS_RETURN on the
 * window, each error class a misused call returns. Rank 0 prints "rma: ok". Any number of
 * ranks.
 *
 * With an argument, one misuse under the default MPI_ERRORS_ARE_FATAL, which must end the run
 * naming the rank and call: "range" (a put past the end of the target's window), "rank" (a
 * target out of range), "epoch" (a put outside any epoch), "free" (MPI_Win_free with an
 * access epoch open), "conflict" (ranks 1 and 2 put to overlapping ints of rank 0 in one
 * epoch), "written" (a put's origin buffer written before the closing fence). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

#define N 16

static int misuse(const char *what) {
    int *base;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    int v[N] = {0};
    int other = (rank + 1) % size;
    if (!strcmp(what, "epoch")) {
        if (rank == 1) MPI_Put(v, 1, MPI_INT, other, 0, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
    } else if (!strcmp(what, "free")) {
        MPI_Group g;
        MPI_Win_get_group(win, &g);
        if (rank == 1) MPI_Win_start(g, 0, win);
        MPI_Win_free(&win);
    } else {
        MPI_Win_fence(0, win);
        if (rank == 1 && !strcmp(what, "range")) MPI_Put(v, 4, MPI_INT, other, N - 2, 4, MPI_INT, win);
        if (rank == 1 && !strcmp(what, "rank")) MPI_Put(v, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win);
        if (!strcmp(what, "conflict") && rank > 0) MPI_Put(v, 2, MPI_INT, 0, rank, 2, MPI_INT, win);
        if (!strcmp(what, "written") && rank == 1) { MPI_Put(v, 2, MPI_INT, 0, 0, 2, MPI_INT, win); v[1] = 7; }
        MPI_Win_fence(0, win);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) return misuse(argv[1]);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A window over the program's memory; its attributes. */
    int mem[N];
    for (int i = 0; i < N; i++) mem[i] = 1000 * rank + i;
    MPI_Win win;
    MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    void *base = NULL;
    MPI_Aint *wsize = NULL;
    int *unit = NULL, *flavor = NULL, *model = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == mem, "MPI_WIN_BASE");
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
    CHECK(flag && *wsize == N * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE");
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    CHECK(flag && *unit == sizeof(int), "MPI_WIN_DISP_UNIT");
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    MPI_Group wg, cg;
    int cmp = -1;
    MPI_Win_get_group(win, &wg);
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    CHECK(cmp == MPI_IDENT, "MPI_Win_get_group");
    MPI_Group_free(&cg);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 0, "a window's name is empty at first");
    MPI_Win_set_name(win, "halo");
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 4 && !strcmp(name, "halo"), "MPI_Win_set_name");

    /* Fence: put to the right, get from the left, accumulate into rank 0. */
    int out[2] = {rank, -rank}, got[3] = {-1, -1, -1};
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(out, 2, MPI_INT, right, 2, 2, MPI_INT, win);
    MPI_Get(got, 3, MPI_INT, left, 8, 3, MPI_INT, win);
    int one = rank + 1;
    MPI_Accumulate(&one, 1, MPI_INT, 0, 12, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 13, 1, MPI_INT, MPI_MAX, win);
    MPI_Win_fence(0, win);
    CHECK(mem[2] == left && mem[3] == -left, "MPI_Put");
    CHECK(got[0] == 1000 * left + 8 && got[1] == 1000 * left + 9 && got[2] == 1000 * left + 10, "MPI_Get");
    if (rank == 0) {
        CHECK(mem[12] == 12 + size * (size + 1) / 2, "MPI_Accumulate MPI_SUM");
        CHECK(mem[13] == (size > 13 ? size : 13), "MPI_Accumulate MPI_MAX");
    }

    /* Derived datatypes: every other int of the origin into a strided target (a vector), and
     * back with a get whose origin is the vector. */
    for (int i = 0; i < N; i++) mem[i] = 0;
    MPI_Datatype every2, pair;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int src[8], back[8];
    for (int i = 0; i < 8; i++) { src[i] = 100 * rank + i; back[i] = -1; }
    MPI_Win_fence(0, win);
    MPI_Put(src, 2, pair, right, 0, 1, every2, win);  /* 4 ints into mem[0,2,4,6] */
    MPI_Win_fence(0, win);
    for (int i = 0; i < 4; i++) CHECK(mem[2 * i] == 100 * left + i && mem[2 * i + 1] == 0, "a put into a vector");
    MPI_Get(back, 1, every2, right, 0, 4, MPI_INT, win);  /* mem[0..4] of the right into back[0,2,4,6] */
    MPI_Win_fence(0, win);
    CHECK(back[0] == 100 * rank + 0 && back[2] == 0 && back[4] == 100 * rank + 1 && back[6] == 0
          && back[1] == -1 && back[3] == -1, "a get into a vector");
    MPI_Type_free(&every2);
    MPI_Type_free(&pair);

    /* Fetching operations on a counter at rank 0. */
    mem[0] = 0; mem[1] = 0; mem[2] = 5;
    MPI_Win_fence(0, win);
    int inc = 1, old = -1, peek = -1, prev[2] = {-1, -1}, add[2] = {10, 20};
    MPI_Fetch_and_op(&inc, &old, MPI_INT, 0, 0, MPI_SUM, win);
    MPI_Win_fence(0, win);
    CHECK(old >= 0 && old < size, "MPI_Fetch_and_op returns the value before (in rank order)");
    CHECK(old == rank, "MPI_Fetch_and_op applies in origin rank order");
    MPI_Fetch_and_op(NULL, &peek, MPI_INT, 0, 0, MPI_NO_OP, win);
    MPI_Get_accumulate(add, 2, MPI_INT, prev, 2, MPI_INT, 0, 1, 2, MPI_INT, MPI_REPLACE, win);
    MPI_Win_fence(0, win);
    CHECK(peek == size, "MPI_Fetch_and_op with MPI_NO_OP");
    if (rank == 0) CHECK(prev[0] == 0 && prev[1] == 5, "MPI_Get_accumulate MPI_REPLACE, first origin");
    else CHECK(prev[0] == 10 && prev[1] == 20, "MPI_Get_accumulate MPI_REPLACE, later origins");
    int cas_new = rank + 100, cas_cmp = 0, cas_old = -1;
    if (rank == 0) mem[5] = 0;
    MPI_Win_fence(0, win);
    MPI_Compare_and_swap(&cas_new, &cas_cmp, &cas_old, MPI_INT, 0, 5, win);
    MPI_Win_fence(0, win);
    CHECK(cas_old == (rank == 0 ? 0 : 100), "MPI_Compare_and_swap: rank 0 swaps, the others see it");
    if (rank == 0) CHECK(mem[5] == 100, "MPI_Compare_and_swap's value");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");

    /* Allocated window of doubles; post/start/complete/wait on a ring: each rank puts to the
     * right and gets from the left. */
    double *d;
    MPI_Win dw;
    MPI_Win_allocate(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &d, &dw);
    MPI_Win_get_attr(dw, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_FLAVOR_ALLOCATE");
    for (int i = 0; i < 4; i++) d[i] = rank + i / 10.0;
    MPI_Group world, rg, lg, both;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &rg);
    MPI_Group_incl(world, 1, &left, &lg);
    MPI_Group_union(lg, rg, &both);
    double dput = 0.5 + rank, dget[2] = {-1, -1};
    MPI_Win_post(both, 0, dw);
    MPI_Win_start(both, 0, dw);
    MPI_Put(&dput, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, dw);
    MPI_Get(dget, 2, MPI_DOUBLE, left, 2, 2, MPI_DOUBLE, dw);
    MPI_Win_complete(dw);
    int done = 0;
    while (!done) MPI_Win_test(dw, &done);
    CHECK(d[0] == 0.5 + left, "a put in a post/start epoch");
    CHECK(dget[0] == left + 0.2 && dget[1] == left + 0.3, "a get in a post/start epoch");
    MPI_Group_free(&rg); MPI_Group_free(&lg); MPI_Group_free(&both); MPI_Group_free(&world);
    MPI_Group_free(&wg);

    /* Errors under MPI_ERRORS_RETURN on the window. */
    MPI_Win_set_errhandler(dw, MPI_ERRORS_RETURN);
    MPI_Errhandler eh;
    MPI_Win_get_errhandler(dw, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler");
    int cls = -1, rc = MPI_Put(&dput, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, dw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "a put outside an epoch is MPI_ERR_RMA_SYNC");
    MPI_Win_fence(0, dw);
    rc = MPI_Put(&dput, 1, MPI_DOUBLE, right, 4, 1, MPI_DOUBLE, dw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "a put past the window's end is MPI_ERR_RMA_RANGE");
    rc = MPI_Get(dget, 1, MPI_DOUBLE, size, 0, 1, MPI_DOUBLE, dw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "a target out of range is MPI_ERR_RANK");
    rc = MPI_Accumulate(&dput, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, dw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_BAND on doubles is MPI_ERR_OP");
    rc = MPI_Get(dget, 1, MPI_DOUBLE, right, -1, 1, MPI_DOUBLE, dw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_DISP, "a negative displacement is MPI_ERR_DISP");
    rc = MPI_Put(&dput, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, 1, MPI_DOUBLE, dw);
    CHECK(rc == MPI_SUCCESS, "MPI_PROC_NULL is a no-op");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, dw);
    MPI_Win_start(MPI_GROUP_EMPTY, 0, dw);
    rc = MPI_Win_free(&dw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC && dw != MPI_WIN_NULL, "MPI_Win_free with an epoch open is MPI_ERR_RMA_SYNC");
    MPI_Win_complete(dw);
    MPI_Win_free(&dw);

    /* Passive target: each rank increments a counter at rank 0 under an exclusive lock (a
     * get, then a put of the value plus one: only mutual exclusion makes the count right),
     * then everyone reads it under a shared lock_all; ranks lock each other pairwise at the same
     * time; a flush completes a get within the epoch. */
    long *c;
    MPI_Win cw;
    MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &c, &cw);
    c[0] = c[1] = c[2] = 0; c[3] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    long cur = -1, nxt;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cw);
    MPI_Get(&cur, 1, MPI_LONG, 0, 0, 1, MPI_LONG, cw);
    MPI_Win_flush(0, cw);
    nxt = cur + 1;
    MPI_Put(&nxt, 1, MPI_LONG, 0, 0, 1, MPI_LONG, cw);
    MPI_Win_unlock(0, cw);
    long fo = -1, one_l = 1;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, cw);
    MPI_Fetch_and_op(&one_l, &fo, MPI_LONG, right, 1, MPI_SUM, cw);
    MPI_Win_unlock(right, cw);
    CHECK(fo >= 0 && fo < size, "MPI_Fetch_and_op under a shared lock");
    MPI_Barrier(MPI_COMM_WORLD);
    long seen[2] = {-1, -1};
    MPI_Win_lock_all(0, cw);
    MPI_Get(&seen[0], 1, MPI_LONG, 0, 0, 1, MPI_LONG, cw);
    MPI_Get(&seen[1], 1, MPI_LONG, left, 3, 1, MPI_LONG, cw);
    MPI_Win_flush_all(cw);
    CHECK(seen[0] == size, "exclusive locks serialize read-modify-write epochs");
    CHECK(seen[1] == left, "MPI_Get in MPI_Win_lock_all after MPI_Win_flush_all");
    MPI_Win_unlock_all(cw);
    MPI_Win_sync(cw);
    /* Request-based operations in a lock epoch. */
    long rv = 40 + rank, rgot = -1;
    MPI_Request rr[2];
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, cw);
    MPI_Rput(&rv, 1, MPI_LONG, right, 2, 1, MPI_LONG, cw, &rr[0]);
    MPI_Rget(&rgot, 1, MPI_LONG, right, 3, 1, MPI_LONG, cw, &rr[1]);
    MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
    CHECK(rgot == right, "MPI_Rget completes at its wait");
    MPI_Win_unlock(right, cw);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(c[2] == 40 + left, "MPI_Rput");
    CHECK(c[1] == 1, "one increment from the left under a shared lock");
    MPI_Win_set_errhandler(cw, MPI_ERRORS_RETURN);
    rc = MPI_Win_unlock(right, cw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "MPI_Win_unlock without a lock is MPI_ERR_RMA_SYNC");
    rc = MPI_Win_lock(7, right, 0, cw);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_LOCKTYPE, "a bad lock type is MPI_ERR_LOCKTYPE");
    MPI_Win_free(&cw);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("rma: ok\n");
    MPI_Finalize();
    return all != 0;
}
