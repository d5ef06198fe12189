/* Exercises the first milestone's functions; every rank checks its results and rank 0 prints
 * "features: ok" (or the first failure). Run on 1 to 5 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Initialized(&flag);
    CHECK(flag && provided == MPI_THREAD_FUNNELED, "Init_thread");
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Nonblocking ring exchange, every send mode's nonblocking form. */
    int out[4] = {rank, rank * 10, rank * 100, rank * 1000}, in[4] = {-1, -1, -1, -1};
    MPI_Request rq[8];
    for (int k = 0; k < 4; k++) MPI_Irecv(&in[k], 1, MPI_INT, left, k, MPI_COMM_WORLD, &rq[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&out[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq[4]);
    MPI_Issend(&out[1], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[5]);
    MPI_Irsend(&out[2], 1, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[6]);
    MPI_Isend(&out[3], 1, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[7]);
    MPI_Status st[8];
    MPI_Waitall(8, rq, st);
    for (int k = 0; k < 4; k++) CHECK(in[k] == out[k] / (rank ? rank : 1) * left || (rank == 0 && in[k] == (int)(left * (k == 0 ? 1 : k == 1 ? 10 : k == 2 ? 100 : 1000))), "ring values");
    CHECK(st[0].MPI_SOURCE == left && st[2].MPI_TAG == 2, "Waitall statuses");
    CHECK(rq[0] == MPI_REQUEST_NULL, "requests freed");

    /* Blocking modes with a buffer for Bsend; Sendrecv; Sendrecv_replace. */
    int bufsize = 1024 + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc(bufsize);
    MPI_Buffer_attach(bbuf, bufsize);
    int v = rank, got = -1;
    MPI_Bsend(&v, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
    MPI_Recv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == left, "Bsend/Recv");
    void *back; int backsize;
    MPI_Buffer_detach(&back, &backsize);
    CHECK(back == bbuf && backsize == bufsize, "Buffer_detach");
    free(bbuf);
    MPI_Status s;
    got = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, right, 8, &got, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &s);
    int count;
    MPI_Get_count(&s, MPI_INT, &count);
    CHECK(got == left && count == 1 && s.MPI_SOURCE == left, "Sendrecv");
    int rep = rank;
    MPI_Sendrecv_replace(&rep, 1, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rep == left, "Sendrecv_replace");

    /* Large messages cross the door in chunks: 3 MiB each way, checked element by element. */
    int big_n = 3 * 1024 * 1024 / 8;
    double *big_out = malloc(sizeof(double) * big_n), *big_in = malloc(sizeof(double) * big_n);
    for (int i = 0; i < big_n; i++) big_out[i] = rank * 1e7 + i;
    MPI_Sendrecv(big_out, big_n, MPI_DOUBLE, right, 10, big_in, big_n, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int big_ok = 1;
    for (int i = 0; i < big_n; i++) big_ok &= big_in[i] == left * 1e7 + i;
    CHECK(big_ok, "3 MiB Sendrecv");
    MPI_Request big_rq[2];
    MPI_Irecv(big_in, big_n, MPI_DOUBLE, left, 14, MPI_COMM_WORLD, &big_rq[0]);
    MPI_Isend(big_out, big_n, MPI_DOUBLE, right, 14, MPI_COMM_WORLD, &big_rq[1]);
    MPI_Waitall(2, big_rq, MPI_STATUSES_IGNORE);
    big_ok = 1;
    for (int i = 0; i < big_n; i++) big_ok &= big_in[i] == left * 1e7 + i;
    CHECK(big_ok, "3 MiB Isend/Irecv");
    free(big_out);
    free(big_in);

    /* Probe, Iprobe, Mprobe/Mrecv, with ANY_SOURCE and ANY_TAG. */
    double d[3] = {rank + 0.5, rank + 1.5, rank + 2.5}, e[3] = {0};
    MPI_Send(d, 3, MPI_DOUBLE, right, 11, MPI_COMM_WORLD);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_DOUBLE, &count);
    CHECK(s.MPI_TAG == 11 && count == 3, "Probe");
    MPI_Message m;
    MPI_Mprobe(left, 11, MPI_COMM_WORLD, &m, &s);
    MPI_Mrecv(e, 3, MPI_DOUBLE, &m, &s);
    CHECK(e[2] == left + 2.5 && m == MPI_MESSAGE_NULL, "Mprobe/Mrecv");
    MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, &s);
    CHECK(!flag, "Iprobe of nothing");
    MPI_Recv(e, 3, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s);
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive");

    /* Persistent requests, started twice. */
    int pin = -1, pout = rank;
    MPI_Request pr[2];
    MPI_Recv_init(&pin, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &pr[0]);
    MPI_Send_init(&pout, 1, MPI_INT, right, 13, MPI_COMM_WORLD, &pr[1]);
    for (int round = 0; round < 2; round++) {
        pout = rank + round;
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
        CHECK(pin == left + round, "persistent round");
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);

    /* Waitany / Testsome. */
    int a1 = -1, a2 = -1;
    MPI_Request two[2];
    MPI_Irecv(&a1, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &two[0]);
    MPI_Irecv(&a2, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &two[1]);
    MPI_Send(&v, 1, MPI_INT, right, 21, MPI_COMM_WORLD);
    int idx, seen = 0;
    MPI_Send(&v, 1, MPI_INT, right, 20, MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++) {
        MPI_Waitany(2, two, &idx, &s);
        CHECK(idx >= 0 && idx < 2 && two[idx] == MPI_REQUEST_NULL && s.MPI_TAG == 20 + idx, "Waitany");
        seen |= 1 << idx;
    }
    MPI_Waitany(2, two, &idx, &s);
    CHECK(seen == 3 && idx == MPI_UNDEFINED && a1 == left && a2 == left, "Waitany all done");

    /* A vector datatype: every other int. */
    int grid[8], col[4];
    for (int i = 0; i < 8; i++) grid[i] = rank * 100 + i;
    MPI_Datatype every_other;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int tsize; MPI_Aint lb, ext;
    MPI_Type_size(every_other, &tsize);
    MPI_Type_get_extent(every_other, &lb, &ext);
    CHECK(tsize == 16 && ext == 7 * 4, "Type_size/extent");
    MPI_Sendrecv(grid, 1, every_other, right, 30, col, 4, MPI_INT, left, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++) CHECK(col[i] == left * 100 + 2 * i, "vector datatype");
    MPI_Type_free(&every_other);

    /* Collectives. */
    int *all = calloc(size * 2, sizeof(int)), *counts = calloc(size, sizeof(int)), *displs = calloc(size, sizeof(int));
    int mine2[2] = {rank, -rank};
    MPI_Allgather(mine2, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) CHECK(all[2 * r] == r && all[2 * r + 1] == -r, "Allgather");
    int total = 0;
    for (int r = 0; r < size; r++) { counts[r] = r % 2 + 1; displs[r] = total; total += counts[r]; }
    int *vbuf = calloc(total, sizeof(int)), vmine[2] = {rank, rank};
    MPI_Allgatherv(vmine, counts[rank], MPI_INT, vbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) CHECK(vbuf[displs[r]] == r, "Allgatherv");
    int sc = -1;
    int *scat = calloc((size_t)size, sizeof(int));
    for (int r = 0; r < size; r++) scat[r] = r * 3;
    MPI_Scatter(scat, 1, MPI_INT, &sc, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    CHECK(sc == rank * 3, "Scatter");
    int *a2a_out = calloc(size, sizeof(int)), *a2a_in = calloc(size, sizeof(int));
    for (int r = 0; r < size; r++) a2a_out[r] = rank * size + r;
    MPI_Alltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) CHECK(a2a_in[r] == r * size + rank, "Alltoall");
    long lsum = 0, lmine = rank + 1;
    MPI_Reduce(&lmine, &lsum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) CHECK(lsum == (long)size * (size + 1) / 2, "Reduce");
    int pre = 0, one = 1;
    MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(pre == rank + 1, "Scan");
    pre = -7;
    MPI_Exscan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0) CHECK(pre == rank, "Exscan");
    struct { double val; int loc; } mx = {(double)(size - 1 - rank), rank}, res;
    MPI_Allreduce(&mx, &res, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(res.val == (double)(size - 1) && res.loc == 0, "MAXLOC");
    mx.val = 1.0;
    MPI_Allreduce(&mx, &res, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(res.val == 1.0 && res.loc == 0, "MINLOC tie goes to the lower index");
    int inplace = rank;
    MPI_Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(inplace == size - 1, "IN_PLACE Allreduce");
    MPI_Op op;
    MPI_Op_create(my_sum, 1, &op);
    int us = 0;
    MPI_Allreduce(&one, &us, 1, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(us == size, "user op");
    MPI_Op_free(&op);
    int *rs_in = calloc(size, sizeof(int)), rs_out = -1;
    for (int r = 0; r < size; r++) rs_in[r] = r;
    MPI_Reduce_scatter_block(rs_in, &rs_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rs_out == rank * size, "Reduce_scatter_block");

    /* Communicators and groups. */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    CHECK(hs == (size + 1 - rank % 2) / 2, "split size");
    int hsum = 0;
    MPI_Allreduce(&one, &hsum, 1, MPI_INT, MPI_SUM, half);
    CHECK(hsum == hs, "collective on a split");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int cmp;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "Comm_compare dup");
    MPI_Group wg, g0;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int zero = 0, tr;
    MPI_Group_incl(wg, 1, &zero, &g0);
    MPI_Group_translate_ranks(g0, 1, &zero, wg, &tr);
    CHECK(tr == 0, "Group_translate_ranks");
    MPI_Comm only0;
    MPI_Comm_create(MPI_COMM_WORLD, g0, &only0);
    CHECK((rank == 0) == (only0 != MPI_COMM_NULL), "Comm_create");
    if (only0 != MPI_COMM_NULL) MPI_Comm_free(&only0);
    MPI_Group_free(&g0);
    MPI_Group_free(&wg);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    int self_size;
    MPI_Comm_size(MPI_COMM_SELF, &self_size);
    CHECK(self_size == 1, "COMM_SELF");

    /* Errors returned, not fatal. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "ERRORS_RETURN rank");
    char text[MPI_MAX_ERROR_STRING]; int tl;
    MPI_Error_string(rc, text, &tl);
    CHECK(tl > 0, "Error_string");
    double t = MPI_Wtime();
    CHECK(t >= 0.0, "Wtime");

    int fails_all = 0;
    MPI_Allreduce(&failures, &fails_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("features: %s\n", fails_all ? "FAILED" : "ok");
    MPI_Finalize();
    return fails_all ? 1 : 0;
}
