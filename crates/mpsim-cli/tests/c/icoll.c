/* The nonblocking collectives (MPI_Ibarrier ... MPI_Iexscan), completed through the ordinary
 * wait and test calls, several in flight at once and overlapping point-to-point traffic, and
 * persistent collectives (MPI_Bcast_init, ...). Every
 * rank checks its results against what MPI requires; rank 0 prints "icoll: ok" (or the first
 * failure). Any number of ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

/* A user operation: elementwise max of absolute values, not commutative-flagged. */
static void absmax(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        int x = abs(a[i]), y = abs(b[i]);
        b[i] = x > y ? x : y;
    }
}

/* An associative, non-commutative user operation on pairs (digits, 10^number of digits):
 * appending b's digits to a's keeps the rank order visible. */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    long *a = in, *b = inout;
    for (int i = 0; i + 1 < *len; i += 2) {
        b[i] = a[i] * b[i + 1] + b[i];
        b[i + 1] = a[i + 1] * b[i + 1];
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = size;
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    int root = n - 1;

    /* Ibarrier and Ibcast, waited for one at a time. */
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    CHECK(r != MPI_REQUEST_NULL, "Ibarrier gives a request");
    MPI_Status st;
    MPI_Wait(&r, &st);
    CHECK(r == MPI_REQUEST_NULL, "Wait frees the Ibarrier request");
    int v[3] = {0, 0, 0};
    if (rank == root) { v[0] = 7; v[1] = 8; v[2] = 9; }
    MPI_Ibcast(v, 3, MPI_INT, root, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(v[0] == 7 && v[1] == 8 && v[2] == 9, "Ibcast");

    /* Iallreduce, Ireduce, Iscan, Iexscan in flight together, completed by one Waitall. */
    int mine = rank + 1, sum = -1, prod = -1, scan = -1, exscan = -1;
    double dmax = -1.0, dx = 0.5 * rank;
    MPI_Request rs[5];
    MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rs[0]);
    MPI_Ireduce(&mine, &prod, 1, MPI_INT, MPI_PROD, 0, MPI_COMM_WORLD, &rs[1]);
    MPI_Iscan(&mine, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rs[2]);
    MPI_Iexscan(&mine, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rs[3]);
    MPI_Iallreduce(&dx, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &rs[4]);
    MPI_Status sts[5];
    MPI_Waitall(5, rs, sts);
    CHECK(sum == n * (n + 1) / 2, "Iallreduce sum");
    if (rank == 0) {
        int f = 1;
        for (int i = 1; i <= n; i++) f *= i;
        CHECK(prod == f, "Ireduce prod at the root");
    } else {
        CHECK(prod == -1, "Ireduce leaves a non-root's buffer alone");
    }
    CHECK(scan == (rank + 1) * (rank + 2) / 2, "Iscan");
    if (rank > 0) CHECK(exscan == rank * (rank + 1) / 2, "Iexscan");
    CHECK(dmax == 0.5 * (n - 1), "Iallreduce max of doubles");
    for (int k = 0; k < 5; k++) CHECK(rs[k] == MPI_REQUEST_NULL, "Waitall frees");
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "status error");

    /* In place. */
    int inplace[2] = {rank, 1};
    MPI_Iallreduce(MPI_IN_PLACE, inplace, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(inplace[0] == n * (n - 1) / 2 && inplace[1] == n, "Iallreduce in place");

    /* Gathers and scatters, tested in a loop until done. */
    int *all = malloc(sizeof(int) * 2 * n), *back = malloc(sizeof(int) * 2 * n);
    int pair[2] = {rank, -rank}, got[2] = {-1, -1};
    for (int i = 0; i < 2 * n; i++) all[i] = back[i] = -1;
    MPI_Igather(pair, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD, &r);
    int flag = 0, polls = 0;
    while (!flag) { MPI_Test(&r, &flag, MPI_STATUS_IGNORE); polls++; }
    CHECK(r == MPI_REQUEST_NULL, "Test frees when done");
    if (rank == 0)
        for (int i = 0; i < n; i++) CHECK(all[2 * i] == i && all[2 * i + 1] == -i, "Igather");
    if (rank == 0)
        for (int i = 0; i < 2 * n; i++) back[i] = 100 + i;
    MPI_Iscatter(back, 2, MPI_INT, got, 2, MPI_INT, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got[0] == 100 + 2 * rank && got[1] == 101 + 2 * rank, "Iscatter");
    MPI_Iallgather(pair, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) CHECK(all[2 * i] == i && all[2 * i + 1] == -i, "Iallgather");

    /* The v forms: rank i contributes i+1 ints; displacements leave a gap of one. */
    int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
    int total = 0;
    for (int i = 0; i < n; i++) { counts[i] = i + 1; displs[i] = total + i; total += i + 1; }
    int span = total + n;
    int *vbuf = malloc(sizeof(int) * span), *contrib = malloc(sizeof(int) * n);
    for (int i = 0; i <= rank; i++) contrib[i] = 1000 * rank + i;
    for (int i = 0; i < span; i++) vbuf[i] = -7;
    MPI_Iallgatherv(contrib, rank + 1, MPI_INT, vbuf, counts, displs, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) CHECK(vbuf[displs[i] + j] == 1000 * i + j, "Iallgatherv data");
        CHECK(vbuf[displs[i] + i + 1] == -7 || displs[i] + i + 1 >= span, "Iallgatherv gap untouched");
    }
    for (int i = 0; i < span; i++) vbuf[i] = -7;
    MPI_Igatherv(contrib, rank + 1, MPI_INT, vbuf, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == root)
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) CHECK(vbuf[displs[i] + j] == 1000 * i + j, "Igatherv");
    int *sv = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) sv[i] = -1;
    MPI_Iscatterv(vbuf, counts, displs, MPI_INT, sv, rank + 1, MPI_INT, root, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int j = 0; j <= rank; j++) CHECK(sv[j] == 1000 * rank + j, "Iscatterv");

    /* Ialltoall and Ialltoallv. */
    int *sa = malloc(sizeof(int) * n), *ra = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) { sa[i] = 100 * rank + i; ra[i] = -1; }
    MPI_Ialltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) CHECK(ra[i] == 100 * i + rank, "Ialltoall");
    /* Rank r sends r+1 ints to every rank, so it receives i+1 from rank i. */
    int *sc = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n);
    int *rc = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n);
    int *sbig = malloc(sizeof(int) * n * (rank + 1)), *rbig = malloc(sizeof(int) * total);
    for (int i = 0; i < n; i++) {
        sc[i] = rank + 1; sd[i] = i * (rank + 1);
        rc[i] = i + 1; rd[i] = displs[i] - i;
        for (int j = 0; j <= rank; j++) sbig[i * (rank + 1) + j] = 10000 * rank + 100 * i + j;
    }
    for (int i = 0; i < total; i++) rbig[i] = -1;
    MPI_Ialltoallv(sbig, sc, sd, MPI_INT, rbig, rc, rd, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) CHECK(rbig[rd[i] + j] == 10000 * i + 100 * rank + j, "Ialltoallv");

    /* Ireduce_scatter and Ireduce_scatter_block. */
    int *rsin = malloc(sizeof(int) * total), rsout[64];
    for (int i = 0; i < total; i++) rsin[i] = i + rank;
    MPI_Ireduce_scatter(rsin, rsout, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int first = displs[rank] - rank;
    for (int j = 0; j <= rank && j < 64; j++)
        CHECK(rsout[j] == n * (first + j) + n * (n - 1) / 2, "Ireduce_scatter");
    int blk[2 * 64], bout[2] = {-1, -1};
    for (int i = 0; i < 2 * n && i < 128; i++) blk[i] = i * (rank + 1);
    MPI_Ireduce_scatter_block(blk, bout, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(bout[0] == 2 * rank * n * (n + 1) / 2 && bout[1] == (2 * rank + 1) * n * (n + 1) / 2, "Ireduce_scatter_block");

    /* User operations, nonblocking: combined in rank order. */
    MPI_Op op, cat;
    MPI_Op_create(absmax, 1, &op);
    MPI_Op_create(concat, 0, &cat);
    int sv2 = (rank % 2 ? -1 : 1) * rank, am = -1;
    MPI_Iallreduce(&sv2, &am, 1, MPI_INT, op, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(am == n - 1, "Iallreduce with a user operation");
    long digit[2] = {rank % 10, 10}, ordered[2] = {-1, -1}, expect = 0;
    MPI_Iscan(digit, ordered, 2, MPI_LONG, cat, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i <= rank; i++) expect = expect * 10 + i % 10;
    if (n <= 12) CHECK(ordered[0] == expect, "Iscan with an order-sensitive user operation");
    MPI_Op_free(&op);
    MPI_Op_free(&cat);

    /* Overlap with point-to-point: a ring exchange while an Iallreduce and an Ibarrier are
     * in flight; Waitany/Waitsome over a mix of both kinds. */
    int token = -1, out = rank, ov = -1, one = 1;
    MPI_Request mix[4];
    MPI_Irecv(&token, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &mix[0]);
    MPI_Iallreduce(&one, &ov, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &mix[1]);
    MPI_Isend(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &mix[2]);
    MPI_Ibarrier(MPI_COMM_WORLD, &mix[3]);
    int done = 0;
    while (done < 4) {
        int idx;
        MPI_Status s;
        MPI_Waitany(4, mix, &idx, &s);
        CHECK(idx >= 0 && idx < 4 && mix[idx] == MPI_REQUEST_NULL, "Waitany index");
        if (idx == 0) CHECK(s.MPI_SOURCE == left && s.MPI_TAG == 5, "Waitany p2p status");
        done++;
    }
    CHECK(token == left && ov == n, "overlap of p2p and collectives");
    MPI_Irecv(&token, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &mix[0]);
    MPI_Ibcast(&ov, 1, MPI_INT, 0, MPI_COMM_WORLD, &mix[1]);
    MPI_Send(&out, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
    done = 0;
    while (done < 2) {
        int cnt, idx[2];
        MPI_Waitsome(2, mix, &cnt, idx, MPI_STATUSES_IGNORE);
        CHECK(cnt >= 1, "Waitsome");
        done += cnt;
    }
    CHECK(ov == n && token == left, "Waitsome over p2p and a collective");

    /* A collective on a split communicator while one on the world is in flight. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hs, hsum = -1, wsum = -1;
    MPI_Comm_size(half, &hs);
    MPI_Request two[2];
    MPI_Iallreduce(&one, &wsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[0]);
    MPI_Iallreduce(&one, &hsum, 1, MPI_INT, MPI_SUM, half, &two[1]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    CHECK(wsum == n && hsum == hs, "collectives on two communicators at once");
    MPI_Comm_free(&half);

    /* Testall until done. */
    int t1 = -1, t2 = -1;
    MPI_Iallreduce(&one, &t1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[0]);
    MPI_Iallreduce(&rank, &t2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &two[1]);
    flag = 0;
    while (!flag) MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE);
    CHECK(t1 == n && t2 == n - 1 && two[0] == MPI_REQUEST_NULL, "Testall");

    /* Persistent collectives (MPI-4): started three times, each start reading the buffers
     * anew, completed by the ordinary waits, then freed while inactive. */
    int pb[2], ps = -1, pin;
    MPI_Request pr[3];
    MPI_Bcast_init(pb, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[0]);
    MPI_Allreduce_init(&pin, &ps, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[1]);
    int *pg = malloc(sizeof(int) * n), pgin;
    MPI_Allgather_init(&pgin, 1, MPI_INT, pg, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[2]);
    for (int round = 0; round < 3; round++) {
        if (rank == 0) { pb[0] = round; pb[1] = -round; } else { pb[0] = pb[1] = -99; }
        pin = rank + round;
        pgin = 10 * rank + round;
        MPI_Start(&pr[0]);
        MPI_Startall(2, &pr[1]);
        MPI_Waitall(3, pr, MPI_STATUSES_IGNORE);
        CHECK(pr[0] != MPI_REQUEST_NULL, "a persistent request stays after its wait");
        CHECK(pb[0] == round && pb[1] == -round, "Bcast_init");
        CHECK(ps == n * (n - 1) / 2 + n * round, "Allreduce_init");
        for (int i = 0; i < n; i++) CHECK(pg[i] == 10 * i + round, "Allgather_init");
    }
    for (int k = 0; k < 3; k++) MPI_Request_free(&pr[k]);
    CHECK(pr[0] == MPI_REQUEST_NULL, "Request_free of an inactive persistent collective");
    free(pg);
    /* Persistent collectives match in the order they were made, not started (MPI-4): odd
     * ranks start them the other way round. */
    int pa = -1;
    MPI_Bcast_init(&pa, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[0]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &pr[1]);
    if (rank == 0) pa = 42;
    if (rank % 2) { MPI_Start(&pr[1]); MPI_Start(&pr[0]); }
    else { MPI_Start(&pr[0]); MPI_Start(&pr[1]); }
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    CHECK(pa == 42, "persistent collectives started in different orders");
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);

    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (bad) printf("icoll: %d failures\n", bad);
        else printf("icoll: ok\n");
    }
    (void)polls;
    free(all); free(back); free(counts); free(displs); free(vbuf); free(contrib); free(sv);
    free(sa); free(ra); free(sc); free(sd); free(rc); free(rd); free(sbig); free(rbig); free(rsin);
    MPI_Finalize();
    return bad != 0;
}
