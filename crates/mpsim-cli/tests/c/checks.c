/* The run's checks of a program against MPI's rules, one case per argument: the wrong ones
 * each make one finding of their class; "coll_ok" and "p2p_ok" are correct programs whose
 * signatures only look different, which must make none. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "";
    int ints[64] = {0}, out[64] = {0};
    float floats[4] = {0};
    double doubles[4] = {0};
    if (!strcmp(what, "coll_root")) {
        MPI_Bcast(ints, 4, MPI_INT, rank == 0 ? 0 : 1, MPI_COMM_WORLD);
    } else if (!strcmp(what, "coll_op")) {
        MPI_Allreduce(ints, out, 4, MPI_INT, rank == size - 1 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(what, "coll_type")) {
        /* The same bytes, another type: runs, and is wrong. */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) MPI_Bcast(ints, 4, MPI_INT, 0, MPI_COMM_WORLD);
        else MPI_Bcast(floats, 4, MPI_FLOAT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "coll_count")) {
        MPI_Gather(ints, rank == 1 ? 2 : 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "coll_kind")) {
        if (rank == 0) MPI_Bcast(ints, 1, MPI_INT, 0, MPI_COMM_WORLD);
        else MPI_Reduce(ints, out, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "coll_ok")) {
        /* 2 x MPI_INT against 1 x contiguous(2, MPI_INT): one type signature. */
        MPI_Datatype two;
        MPI_Type_contiguous(2, MPI_INT, &two);
        MPI_Type_commit(&two);
        if (rank == 0) MPI_Bcast(ints, 2, MPI_INT, 0, MPI_COMM_WORLD);
        else MPI_Bcast(ints, 1, two, 0, MPI_COMM_WORLD);
        MPI_Allgather(ints, 2, MPI_INT, out, 1, two, MPI_COMM_WORLD);
        MPI_Gather(rank == 0 ? MPI_IN_PLACE : ints, 2, MPI_INT, out, 2, MPI_INT, 0, MPI_COMM_WORLD);
        int counts[64], displs[64];
        for (int i = 0; i < size; i++) counts[i] = 1, displs[i] = i;
        MPI_Alltoallv(ints, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
        MPI_Op op;
        MPI_Op_create(user_sum, 1, &op);
        MPI_Allreduce(ints, out, 2, MPI_INT, op, MPI_COMM_WORLD);
        MPI_Op_free(&op);
        MPI_Request r;
        MPI_Ibcast(doubles, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* Raw bytes match any signature. */
        if (rank == 0) MPI_Bcast(doubles, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        else MPI_Bcast(doubles, 32, MPI_BYTE, 0, MPI_COMM_WORLD);
        /* No data is the empty signature, however it is written. */
        MPI_Datatype empty;
        MPI_Type_contiguous(0, MPI_INT, &empty);
        MPI_Type_commit(&empty);
        MPI_Bcast(ints, rank == 0 ? 1 : 0, rank == 0 ? empty : MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Type_free(&empty);
        MPI_Type_free(&two);
    } else if (!strcmp(what, "p2p_type")) {
        if (rank == 0) MPI_Send(ints, 2, MPI_INT, 1, 7, MPI_COMM_WORLD);
        if (rank == 1) MPI_Recv(floats, 2, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "p2p_size")) {
        /* Two ints received as a double: the sizes agree, the types do not. */
        if (rank == 0) MPI_Send(ints, 2, MPI_INT, 1, 7, MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Request r;
            MPI_Irecv(doubles, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(what, "p2p_isend")) {
        /* A nonblocking send (queued by the rank in a simulated run) carries its signature. */
        if (rank == 0) {
            MPI_Request r;
            MPI_Isend(ints, 2, MPI_INT, 1, 7, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (rank == 1) MPI_Recv(floats, 2, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "p2p_ok")) {
        MPI_Datatype two;
        MPI_Type_contiguous(2, MPI_INT, &two);
        MPI_Type_commit(&two);
        if (rank == 0) {
            MPI_Send(ints, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
            MPI_Send(ints, 4, MPI_INT, 1, 2, MPI_COMM_WORLD);
            MPI_Send(doubles, 2, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
            MPI_Send(ints, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
            MPI_Send(doubles, 1, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Request r[2];
            MPI_Recv(ints, 2, two, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(ints, 64, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(out, 16, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* Two receives on one stream, completed in the other order. */
            MPI_Irecv(ints, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(doubles, 1, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, &r[1]);
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
        MPI_Type_free(&two);
    } else if (!strcmp(what, "comm_leak")) {
        MPI_Comm dup, half;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        if (rank == 0) MPI_Comm_free(&half);
    } else if (!strcmp(what, "object_leak")) {
        /* Rank 1 frees nothing it made; the others free all (no finding of theirs). */
        MPI_Group g;
        MPI_Datatype t;
        MPI_Op op;
        MPI_Request r;
        int x = rank, y = 0;
        MPI_Comm_group(MPI_COMM_WORLD, &g);
        MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Type_commit(&t);
        MPI_Op_create(user_sum, 1, &op);
        MPI_Send_init(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
        MPI_Recv(&y, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* inactive now, still to be freed */
        if (rank != 1) {
            MPI_Group_free(&g);
            MPI_Type_free(&t);
            MPI_Op_free(&op);
            MPI_Request_free(&r);
        }
    }
    MPI_Finalize();
    if (rank == 0) printf("checks %s: done\n", what);
    return 0;
}
