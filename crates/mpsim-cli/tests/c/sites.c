/* Calls whose errors and findings the reports place in the source (tests/c_sites.rs): each
 * erroneous call is on a line the test names, marked SITE. `sites WHAT` on 2 ranks. Built
 * with -DWRAP, the program is its own profiling layer: its MPI_Send calls PMPI_Send. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#ifdef WRAP
int wrapped_sends = 0;

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    wrapped_sends++;
    return PMPI_Send(buf, count, dt, dest, tag, comm); /* SITE wrap */
}
#endif

__attribute__((noinline)) static void bad_rank(int x) {
    MPI_Send(&x, 1, MPI_INT, 99, 0, MPI_COMM_WORLD); /* SITE badrank */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, x = 1;
    float f[2] = {0, 0};
    int v[2] = {1, 2};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "badrank")) {
        if (rank == 1)
            bad_rank(x);
    } else if (!strcmp(what, "type")) {
        if (rank == 0)
            MPI_Send(v, 2, MPI_INT, 1, 7, MPI_COMM_WORLD); /* SITE type-send */
        else
            MPI_Recv(f, 2, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE type-recv */
    } else if (!strcmp(what, "deadlock")) {
        MPI_Recv(&x, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE deadlock */
    } else if (!strcmp(what, "wrapped")) {
        if (rank == 0)
            MPI_Send(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        else
            MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#ifdef WRAP
        if (rank == 0 && wrapped_sends != 1) {
            printf("the program's MPI_Send was not called\n");
            return 1;
        }
#endif
    }
    MPI_Finalize();
    return 0;
}
