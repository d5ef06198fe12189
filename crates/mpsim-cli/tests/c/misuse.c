/* Programs that go wrong, one per argument: each must end the run with a clear report, never
 * hang, and leave no process behind. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "segv")) {
        if (rank == 1) {
            MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            volatile int *p = NULL;
            *p = 1;
        }
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "queued_bsend")) {
        /* A buffered send with no buffer attached: queued (it needs no answer), its error
         * ends the run when the proxy executes it, before the receive that carried it. */
        if (rank == 0) {
            MPI_Bsend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "exit3")) {
        if (rank == 1) exit(3);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "wtime-wait")) {
        /* A benchmark's "dummy compute": waits for MPI_Wtime to move. */
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 1e-3) x++;
    } else if (!strcmp(what, "spin")) {
        /* Computes for ever, never calling MPI again. */
        volatile unsigned long n = 0;
        for (;;) n++;
    } else if (!strcmp(what, "deadlock")) {
        MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "badrank")) {
        MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "truncate")) {
        int big[4] = {1, 2, 3, 4};
        if (rank == 0) MPI_Send(big, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
        if (rank == 1) MPI_Recv(big, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "pending")) {
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
    } else if (!strcmp(what, "inflight")) {
        int buf[16] = {0};
        MPI_Request r;
        if (rank == 0) {
            MPI_Isend(buf, 16, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
            buf[3] = 99; /* erroneous: the send is in flight */
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(what, "recv_inflight")) {
        int buf[16] = {0};
        MPI_Request r;
        if (rank == 0) {
            MPI_Send(buf, 16, MPI_INT, 1, 0, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Irecv(buf, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
            buf[0] = 7; /* erroneous: the receive is in flight */
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(what, "icoll_send_inflight")) {
        int mine = rank, all[64];
        MPI_Request r;
        MPI_Igather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
        if (rank == 1) mine = 42; /* erroneous: the gather may still read it */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "icoll_recv_inflight")) {
        int v[4] = {1, 2, 3, 4};
        MPI_Request r;
        MPI_Ibcast(v, 4, MPI_INT, 0, MPI_COMM_WORLD, &r);
        if (rank == 1) v[2] = 0; /* erroneous: the broadcast writes it */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "icoll_free")) {
        /* MPI makes freeing a nonblocking collective's request erroneous. */
        int y = 0;
        MPI_Request r;
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    } else if (!strcmp(what, "icoll_twice")) {
        /* The same request completed twice, through a copy of its handle. */
        MPI_Request r, copy;
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        copy = r;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Wait(&copy, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "icoll_never")) {
        /* The last rank never joins the Ibarrier; it waits for a message nobody sends. */
        MPI_Request r;
        if (rank == size - 1) {
            MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(what, "icoll_pending")) {
        int y = 0;
        MPI_Request r;
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    } else if (!strcmp(what, "icoll_cancel")) {
        MPI_Request r;
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
    } else if (!strcmp(what, "abort")) {
        if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 7);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
