/* A token around a ring, then collectives: each rank checks what it got. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 3;
    int token = 0;
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            token++;
            MPI_Send(&token, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    double mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int root_value = rank == 0 ? 42 : -1;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int *all = malloc(sizeof(int) * size);
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int ok = sum == size * (size + 1) / 2.0 && root_value == 42;
    if (rank == 0) {
        ok = ok && token == iters * size;
        for (int r = 0; r < size; r++) ok = ok && all[r] == r;
        printf("ring: token %d after %d laps, sum %g, %s\n", token, iters, sum, ok ? "ok" : "WRONG");
    }
    free(all);
    MPI_Finalize();
    return ok ? 0 : 1;
}
