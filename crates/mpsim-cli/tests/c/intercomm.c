/* Intercommunicators (MPI 7.6) and MPI_Comm_create_group, checked against what MPI requires:
 * MPI_Intercomm_create from the two halves of MPI_COMM_WORLD, the sizes, ranks and groups,
 * point-to-point in every form (statuses name the remote rank), the intercommunicator
 * collectives with MPI_ROOT and MPI_PROC_NULL, Intercomm_merge, dup, split, create, compare,
 * free, and MPI_ERR_COMM for what is not defined on one. Needs 2 ranks or more. Rank 0 prints
 * "intercomm: ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int wrank, wsize, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", wrank, what, __LINE__); } } while (0)

/* Point-to-point between the groups: every local rank sends to remote rank r % rsize. */
static void p2p(MPI_Comm inter, int left) {
    int me, lsize, rsize;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int value = 1000 * left + me;
    MPI_Request req;
    MPI_Isend(&value, 1, MPI_INT, me % rsize, 5, inter, &req);
    /* Remote ranks q with q % lsize == me send to me. */
    int expect = 0;
    for (int q = 0; q < rsize; q++) if (q % lsize == me) expect++;
    for (int k = 0; k < expect; k++) {
        int got = -1;
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, 5, inter, &st);
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "probe names a remote rank");
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &st);
        CHECK(got == 1000 * !left + st.MPI_SOURCE, "status source is the sender's rank in its group");
        CHECK(st.MPI_SOURCE % lsize == me, "the sender chose this rank");
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    /* Rank 0 of each group sends rank 1 of the other, same tag, different types: two streams
     * whose ranks in the intercommunicator are the same numbers (the type check must not mix
     * them: each is received as it was sent). */
    if (lsize > 1 && rsize > 1) {
        if (me == 0) {
            if (left) {
                int v = 3;
                MPI_Send(&v, 1, MPI_INT, 1, 6, inter);
            } else {
                double v = 3.5;
                MPI_Send(&v, 1, MPI_DOUBLE, 1, 6, inter);
            }
        } else if (me == 1) {
            if (left) {
                double v = 0;
                MPI_Recv(&v, 1, MPI_DOUBLE, 0, 6, inter, MPI_STATUS_IGNORE);
                CHECK(v == 3.5, "a double from the other group's rank 0");
            } else {
                int v = 0;
                MPI_Recv(&v, 1, MPI_INT, 0, 6, inter, MPI_STATUS_IGNORE);
                CHECK(v == 3, "an int from the other group's rank 0");
            }
        }
    }

    /* Sendrecv with partner me % rsize, when it is paired back (rank 0 of each side). */
    if (me == 0) {
        int out = 7 + left, in = -1;
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_INT, 0, 6, &in, 1, MPI_INT, 0, 6, inter, &st);
        CHECK(in == 7 + !left && st.MPI_SOURCE == 0, "Sendrecv between the leaders");
        /* Synchronous and persistent sends, leader to leader. */
        int a = 3, b = -1;
        if (left) {
            MPI_Ssend(&a, 1, MPI_INT, 0, 8, inter);
            MPI_Send_init(&a, 1, MPI_INT, 0, 9, inter, &req);
            for (int i = 0; i < 3; i++) { a = i; MPI_Start(&req); MPI_Wait(&req, MPI_STATUS_IGNORE); }
        } else {
            MPI_Recv(&b, 1, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE);
            CHECK(b == 3, "Ssend");
            MPI_Recv_init(&b, 1, MPI_INT, 0, 9, inter, &req);
            for (int i = 0; i < 3; i++) { MPI_Start(&req); MPI_Wait(&req, MPI_STATUS_IGNORE); CHECK(b == i, "persistent"); }
        }
        MPI_Request_free(&req);
    }
}

static void collectives(MPI_Comm inter, int left) {
    int me, lsize, rsize;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Barrier(inter);

    /* Bcast from left rank 0 to the right group. */
    int v = left ? (me == 0 ? 42 : -5) : -1;
    int root = left ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(&v, 1, MPI_INT, root, inter);
    CHECK(left ? v == (me == 0 ? 42 : -5) : v == 42, "Bcast");

    /* Reduce to right rank 0 of the left group's (rank + 1). */
    int s = me + 1, sum = -1;
    root = left ? 0 : (me == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Reduce(&s, &sum, 1, MPI_INT, MPI_SUM, root, inter);
    if (!left && me == 0) CHECK(sum == rsize * (rsize + 1) / 2, "Reduce");

    /* Allreduce: each group gets the other's sum. */
    int all = -1;
    MPI_Allreduce(&s, &all, 1, MPI_INT, MPI_SUM, inter);
    CHECK(all == rsize * (rsize + 1) / 2, "Allreduce");

    /* Gather to left rank 0 from the right group; Scatter back. */
    int *buf = malloc(sizeof(int) * (lsize + rsize + 8));
    for (int i = 0; i < lsize + rsize + 8; i++) buf[i] = -1;
    int mine = 100 + me;
    root = left ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Gather(&mine, 1, MPI_INT, buf, 1, MPI_INT, root, inter);
    if (left && me == 0) for (int i = 0; i < rsize; i++) CHECK(buf[i] == 100 + i, "Gather");
    int counts[64], displs[64];
    for (int i = 0; i < rsize && i < 64; i++) { counts[i] = 1; displs[i] = rsize - 1 - i; }
    MPI_Gatherv(&mine, 1, MPI_INT, buf, counts, displs, MPI_INT, root, inter);
    if (left && me == 0) for (int i = 0; i < rsize; i++) CHECK(buf[rsize - 1 - i] == 100 + i, "Gatherv");
    if (left && me == 0) for (int i = 0; i < rsize; i++) buf[i] = 200 + i;
    int got = -1;
    MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT, root, inter);
    if (!left) CHECK(got == 200 + me, "Scatter");
    MPI_Scatterv(buf, counts, displs, MPI_INT, &got, 1, MPI_INT, root, inter);
    if (!left) CHECK(got == 200 + lsize - 1 - me, "Scatterv (the root's remote group is this one)");

    /* Allgather and Alltoall: blocks from every remote rank. */
    MPI_Allgather(&mine, 1, MPI_INT, buf, 1, MPI_INT, inter);
    for (int i = 0; i < rsize; i++) CHECK(buf[i] == 100 + i, "Allgather");
    int *out = malloc(sizeof(int) * (rsize + 1));
    for (int i = 0; i < rsize; i++) out[i] = 1000 * me + i;
    MPI_Alltoall(out, 1, MPI_INT, buf, 1, MPI_INT, inter);
    for (int i = 0; i < rsize; i++) CHECK(buf[i] == 1000 * i + me, "Alltoall");
    int ones[64], disp[64];
    for (int i = 0; i < rsize && i < 64; i++) { ones[i] = 1; disp[i] = i; }
    MPI_Alltoallv(out, ones, disp, MPI_INT, buf, ones, disp, MPI_INT, inter);
    for (int i = 0; i < rsize; i++) CHECK(buf[i] == 1000 * i + me, "Alltoallv");
    MPI_Allgatherv(&mine, 1, MPI_INT, buf, ones, disp, MPI_INT, inter);
    for (int i = 0; i < rsize; i++) CHECK(buf[i] == 100 + i, "Allgatherv");

    /* Reduce_scatter_block: the groups must agree on the total, so only when sizes match. */
    if (lsize == rsize) {
        int *in = malloc(sizeof(int) * lsize);
        for (int i = 0; i < lsize; i++) in[i] = i + me;
        int r = -1;
        MPI_Reduce_scatter_block(in, &r, 1, MPI_INT, MPI_SUM, inter);
        /* Element me summed over the remote ranks q: sum(me + q). */
        CHECK(r == rsize * me + rsize * (rsize - 1) / 2, "Reduce_scatter_block");
        free(in);
    }

    /* A nonblocking one completes through MPI_Wait. */
    MPI_Request req;
    all = -1;
    MPI_Iallreduce(&s, &all, 1, MPI_INT, MPI_SUM, inter, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(all == rsize * (rsize + 1) / 2, "Iallreduce");
    /* A persistent one, started twice; its counts have an entry per remote rank. */
    int *pc = malloc(sizeof(int) * (rsize + 1)), *pd = malloc(sizeof(int) * (rsize + 1));
    int *pin = malloc(sizeof(int) * (rsize + 1));
    for (int i = 0; i < rsize; i++) { pc[i] = 1; pd[i] = rsize - 1 - i; pin[i] = -1; }
    MPI_Allgatherv_init(&mine, 1, MPI_INT, pin, pc, pd, MPI_INT, inter, MPI_INFO_NULL, &req);
    for (int k = 0; k < 2; k++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < rsize; i++) CHECK(pin[rsize - 1 - i] == 100 + i, "Allgatherv_init");
    }
    MPI_Request_free(&req);
    free(pc); free(pd); free(pin);
    free(out);
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        if (wrank == 0) printf("intercomm: ok\n");
        MPI_Finalize();
        return 0;
    }
    int half = wsize / 2, left = wrank < half;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, left, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? half : 0, 77, &inter);

    int flag = 0, lsize, rsize, me;
    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag == 1, "Comm_test_inter on an intercommunicator");
    MPI_Comm_test_inter(local, &flag);
    CHECK(flag == 0, "Comm_test_inter on an intracommunicator");
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &me);
    CHECK(lsize == (left ? half : wsize - half) && rsize == wsize - lsize, "sizes");
    CHECK(me == (left ? wrank : wrank - half), "rank is the local one");

    MPI_Group wg, rg, lg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_remote_group(inter, &rg);
    MPI_Comm_group(inter, &lg);
    int zero = 0, w = -1;
    MPI_Group_translate_ranks(rg, 1, &zero, wg, &w);
    CHECK(w == (left ? half : 0), "remote group's rank 0");
    MPI_Group_translate_ranks(lg, 1, &zero, wg, &w);
    CHECK(w == (left ? 0 : half), "local group's rank 0");
    MPI_Group_free(&rg);
    MPI_Group_free(&lg);
    MPI_Group_free(&wg);

    MPI_Comm_set_name(inter, "inter");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(inter, name, &len);
    CHECK(len == 5, "Comm_get_name");

    p2p(inter, left);
    collectives(inter, left);

    /* A duplicate: its traffic never meets the original's. */
    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    int cmp;
    MPI_Comm_compare(inter, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare with a dup");
    MPI_Comm_compare(inter, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_UNEQUAL, "compare with the world");
    if (me == 0) {
        int a = 1, b = 2, x = -1, y = -1;
        MPI_Send(&a, 1, MPI_INT, 0, 0, dup);
        MPI_Send(&b, 1, MPI_INT, 0, 0, inter);
        MPI_Recv(&x, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
        MPI_Recv(&y, 1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE);
        CHECK(x == 2 && y == 1, "dup's traffic is its own");
    }
    collectives(dup, left);
    MPI_Comm_free(&dup);

    /* Merge: the group passing high = 1 (the left one) comes second. */
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, left, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == wsize, "merged size");
    CHECK(mrank == (left ? (wsize - half) + wrank : wrank - half), "merged order");
    int one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == wsize, "Allreduce on the merged communicator");
    MPI_Comm_free(&merged);

    /* Split by local rank parity: color c pairs the two groups' ranks of that parity. */
    MPI_Comm sub;
    MPI_Comm_split(inter, me % 2, -me, &sub);
    int evens_r = (rsize + 1) / 2, odds_r = rsize / 2;
    int want = me % 2 ? odds_r : evens_r;
    if (want == 0) CHECK(sub == MPI_COMM_NULL, "split with no remote partner");
    else {
        int srs, ssz, srk;
        MPI_Comm_remote_size(sub, &srs);
        MPI_Comm_size(sub, &ssz);
        MPI_Comm_rank(sub, &srk);
        CHECK(srs == want, "split's remote size");
        int same = me % 2 ? lsize / 2 : (lsize + 1) / 2;
        CHECK(ssz == same && srk == same - 1 - me / 2, "split's local rank by key");
        collectives(sub, left);
        MPI_Comm_free(&sub);
    }

    /* Create from the local group without its rank 0 (when that leaves someone). */
    MPI_Group g, g2;
    MPI_Comm_group(inter, &g);
    MPI_Group_excl(g, 1, &zero, &g2);
    MPI_Comm created;
    MPI_Comm_create(inter, g2, &created);
    if (me == 0 || lsize == 1 || rsize == 1) CHECK(created == MPI_COMM_NULL, "Comm_create leaves out rank 0");
    else {
        int crs;
        MPI_Comm_remote_size(created, &crs);
        CHECK(crs == rsize - 1, "Comm_create's remote group");
        MPI_Comm_free(&created);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&g2);

    /* What an intercommunicator does not define is MPI_ERR_COMM. */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int x = 1, y;
    int rc = MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "Scan on an intercommunicator");
    /* Ranks and roots name the remote group; an error inside a collective returns its class. */
    rc = MPI_Send(&x, 1, MPI_INT, rsize, 0, inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "a send to a rank past the remote group");
    rc = MPI_Bcast(&x, 1, MPI_INT, rsize, inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "a root past the remote group");
    rc = MPI_Allreduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "an Allreduce with no datatype");

    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);

    /* MPI_Comm_create_group: the odd world ranks only, in reverse order. */
    if (wrank % 2 == 1) {
        int n = wsize / 2, *ranks = malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++) ranks[i] = 2 * (n - 1 - i) + 1;
        MPI_Group wg2, og;
        MPI_Comm_group(MPI_COMM_WORLD, &wg2);
        MPI_Group_incl(wg2, n, ranks, &og);
        MPI_Comm odd;
        MPI_Comm_create_group(MPI_COMM_WORLD, og, 3, &odd);
        int orank, osize, osum = 0;
        MPI_Comm_rank(odd, &orank);
        MPI_Comm_size(odd, &osize);
        CHECK(osize == n && orank == (n - 1) - wrank / 2, "Comm_create_group's ranks");
        MPI_Allreduce(&wrank, &osum, 1, MPI_INT, MPI_SUM, odd);
        CHECK(osum == n * n, "Allreduce on a create_group communicator");
        MPI_Comm_free(&odd);
        MPI_Group_free(&og);
        MPI_Group_free(&wg2);
        free(ranks);
    }

    /* MPI_Comm_create with disjoint groups on different ranks (MPI 7.4.2): one each. */
    {
        MPI_Group wg3, mine;
        MPI_Comm_group(MPI_COMM_WORLD, &wg3);
        int range[1][3] = {{wrank % 2, wsize - 1, 2}};
        MPI_Group_range_incl(wg3, 1, range, &mine);
        MPI_Comm part;
        MPI_Comm_create(MPI_COMM_WORLD, mine, &part);
        int psize, prank;
        MPI_Comm_size(part, &psize);
        MPI_Comm_rank(part, &prank);
        CHECK(psize == (wsize - wrank % 2 + 1) / 2 && prank == wrank / 2, "Comm_create with disjoint groups");
        MPI_Comm_free(&part);

        /* MPI-4's forms from groups: the same halves as above, with no communicator. */
        MPI_Group lo, hi;
        int lr[1][3] = {{0, half - 1, 1}}, hr[1][3] = {{half, wsize - 1, 1}};
        MPI_Group_range_incl(wg3, 1, lr, &lo);
        MPI_Group_range_incl(wg3, 1, hr, &hi);
        MPI_Comm ic, fg;
        MPI_Intercomm_create_from_groups(left ? lo : hi, 0, left ? hi : lo, 0, "tag", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &ic);
        int irs;
        MPI_Comm_remote_size(ic, &irs);
        CHECK(irs == (left ? wsize - half : half), "Intercomm_create_from_groups' remote size");
        int s1 = 1, s2 = 0;
        MPI_Allreduce(&s1, &s2, 1, MPI_INT, MPI_SUM, ic);
        CHECK(s2 == irs, "Allreduce on it");
        MPI_Comm_free(&ic);
        MPI_Comm_create_from_group(left ? lo : hi, "half", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &fg);
        MPI_Comm_size(fg, &psize);
        CHECK(psize == (left ? half : wsize - half), "Comm_create_from_group's size");
        MPI_Comm_free(&fg);
        MPI_Group_free(&lo);
        MPI_Group_free(&hi);
        MPI_Group_free(&mine);
        MPI_Group_free(&wg3);
    }

    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0 && bad == 0) printf("intercomm: ok\n");
    MPI_Finalize();
    return bad != 0;
}
