/* Ring of N = MPI_Comm_size ranks: each of ITERS iterations (argv[1], default 1000) passes
 * 8 bytes around once with blocking MPI_Send/MPI_Recv (tag 7); rank 0 prints the message count
 * and its MPI_Wtime elapsed.  Run: smpirun -np N ... ./ring [ITERS]  (or mpirun -np N) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long iters = argc > 1 ? atol(argv[1]) : 1000;
  int right = (rank + 1) % n, left = (rank + n - 1) % n;
  char msg[8] = {0};

  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; i++) {
    if (rank == 0) {
      MPI_Send(msg, 8, MPI_CHAR, right, 7, MPI_COMM_WORLD);
      MPI_Recv(msg, 8, MPI_CHAR, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(msg, 8, MPI_CHAR, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(msg, 8, MPI_CHAR, right, 7, MPI_COMM_WORLD);
    }
  }
  double t = MPI_Wtime() - t0;

  if (rank == 0) {
    printf("ranks %d iterations %ld messages %ld\n", n, iters, (long)n * iters);
    printf("wtime_s %.6f\n", t);
  }
  MPI_Finalize();
  return 0;
}
