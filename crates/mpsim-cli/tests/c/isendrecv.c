/* MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace: one request that completes when both its
 * send and its receive have, through every wait and test. A ring shift in both directions
 * (MPI_Waitall over two of them), in place, with MPI_PROC_NULL at the ends of a chain; and a
 * request whose receive completes long before its send, which no test may report complete
 * until the send has (its data and status are then the receive's). Rank 0 prints
 * "isendrecv: ok". Any number of ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

#define BIG 40000 /* ints: 160 KB, more than an eager message */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Both directions at once, large messages. */
    int *to_r = malloc(BIG * sizeof(int)), *to_l = malloc(BIG * sizeof(int));
    int *from_l = malloc(BIG * sizeof(int)), *from_r = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++) { to_r[i] = rank * BIG + i; to_l[i] = -(rank * BIG + i); from_l[i] = from_r[i] = 0; }
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Isendrecv(to_r, BIG, MPI_INT, right, 1, from_l, BIG, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Isendrecv(to_l, BIG, MPI_INT, left, 2, from_r, BIG, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, st);
    int n0 = -1, n1 = -1;
    MPI_Get_count(&st[0], MPI_INT, &n0);
    MPI_Get_count(&st[1], MPI_INT, &n1);
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Waitall frees both");
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1 && n0 == BIG, "the receive's status (right shift)");
    CHECK(st[1].MPI_SOURCE == right && st[1].MPI_TAG == 2 && n1 == BIG, "the receive's status (left shift)");
    CHECK(from_l[0] == left * BIG && from_l[BIG - 1] == left * BIG + BIG - 1, "data from the left");
    CHECK(from_r[7] == -(right * BIG + 7), "data from the right");

    /* In place: each rank's values move one to the right. */
    int mine[5];
    for (int i = 0; i < 5; i++) mine[i] = 10 * rank + i;
    MPI_Request r;
    MPI_Status s;
    MPI_Isendrecv_replace(mine, 5, MPI_INT, right, 3, left, 3, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &s);
    CHECK(mine[0] == 10 * left && mine[4] == 10 * left + 4 && s.MPI_SOURCE == left, "Isendrecv_replace");

    /* A chain: the ends send to or receive from MPI_PROC_NULL. */
    int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int out = rank, in = -5, flag = 0;
    MPI_Isendrecv(&out, 1, MPI_INT, up, 4, &in, 1, MPI_INT, down, 4, MPI_COMM_WORLD, &r);
    while (!flag) MPI_Test(&r, &flag, &s);
    CHECK(r == MPI_REQUEST_NULL, "Test frees it");
    CHECK(rank == 0 ? in == -5 : (in == rank - 1 && s.MPI_SOURCE == rank - 1), "a chain with MPI_PROC_NULL ends");

    /* The receive completes first; the send waits for rank 1, which waits for rank 0. */
    if (size > 1 && rank < 2) {
        int small = 0;
        int *big = malloc(BIG * sizeof(int));
        if (rank == 0) {
            for (int i = 0; i < BIG; i++) big[i] = 3 * i;
            MPI_Isendrecv(big, BIG, MPI_INT, 1, 5, &small, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &r);
            int after = 0;
            /* Sent after the small one: once it is here, so is the small one (non-overtaking). */
            MPI_Recv(&after, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int idx = -2, outcount = -2, indices[1];
            MPI_Test(&r, &flag, &s);
            CHECK(!flag && r != MPI_REQUEST_NULL, "Test: the send is not complete");
            MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE);
            CHECK(!flag, "Testall: the send is not complete");
            MPI_Testany(1, &r, &idx, &flag, &s);
            CHECK(!flag && idx == MPI_UNDEFINED, "Testany: the send is not complete");
            MPI_Testsome(1, &r, &outcount, indices, MPI_STATUSES_IGNORE);
            CHECK(outcount == 0, "Testsome: the send is not complete");
            MPI_Request_get_status(r, &flag, &s);
            CHECK(!flag, "Request_get_status: the send is not complete");
            MPI_Send(&after, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
            MPI_Waitany(1, &r, &idx, &s);
            int n = -1;
            MPI_Get_count(&s, MPI_INT, &n);
            CHECK(idx == 0 && r == MPI_REQUEST_NULL, "Waitany completes it");
            CHECK(small == 42 && s.MPI_SOURCE == 1 && s.MPI_TAG == 6 && n == 1, "the receive's data and status");
        } else {
            small = 42;
            MPI_Send(&small, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
            MPI_Send(&small, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            MPI_Recv(&small, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(big, BIG, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(big[BIG - 1] == 3 * (BIG - 1), "the large message, after");
        }
        free(big);
    }
    free(to_r); free(to_l); free(from_l); free(from_r);

    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(bad ? "isendrecv: %d failures\n" : "isendrecv: ok\n", bad);
    MPI_Finalize();
    return bad != 0;
}
