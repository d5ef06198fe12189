/* 2D halo exchange with exactly the communication of mpsim's crates/mpsim/examples/stencil2d.rs,
 * without its compute: the same px x py grid (its `dims`), non-periodic neighbours, a barrier
 * (gather to rank 0 and release, 0-byte messages, tag 1), ITERS iterations of one irecv then one
 * isend of N doubles per existing neighbour (north, south, west, east; tag 10 + direction of
 * travel) and one MPI_Waitall, then two result messages from every rank but 0 (tag 2).
 * Rank 0 prints the grid, the number of point-to-point messages all ranks sent (summed with an
 * MPI_Reduce after the last of them, itself not counted) and its MPI_Wtime elapsed.
 * Run: smpirun -np RANKS ... ./halo [N=8] [ITERS=100]  (or mpirun -np RANKS) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { BARRIER_TAG = 1, RESULT_TAG = 2, HALO_TAG = 10 };
enum { NORTH, SOUTH, WEST, EAST };
static const int opposite[4] = {SOUTH, NORTH, EAST, WEST};

/* py = the largest divisor of ranks with py * py <= ranks, px = ranks / py (stencil2d's dims). */
static void dims(int ranks, int *px, int *py) {
  *py = 1;
  for (int d = 1; d * d <= ranks; d++)
    if (ranks % d == 0) *py = d;
  *px = ranks / *py;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size, px, py;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 8;
  long iters = argc > 2 ? atol(argv[2]) : 100;
  dims(size, &px, &py);
  int rx = me % px, ry = me / px;
  int neighbour[4] = {ry > 0 ? me - px : -1, ry + 1 < py ? me + px : -1,
                      rx > 0 ? me - 1 : -1, rx + 1 < px ? me + 1 : -1};
  double *send = calloc(4 * (size_t)n, sizeof(double)), *recv = calloc(4 * (size_t)n, sizeof(double));
  long sent = 0;

  /* Barrier: gather to rank 0, then release. */
  if (me == 0) {
    for (int r = 1; r < size; r++) MPI_Recv(NULL, 0, MPI_BYTE, r, BARRIER_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 1; r < size; r++, sent++) MPI_Send(NULL, 0, MPI_BYTE, r, BARRIER_TAG, MPI_COMM_WORLD);
  } else {
    MPI_Send(NULL, 0, MPI_BYTE, 0, BARRIER_TAG, MPI_COMM_WORLD), sent++;
    MPI_Recv(NULL, 0, MPI_BYTE, 0, BARRIER_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; i++) {
    MPI_Request req[8];
    int k = 0;
    for (int d = 0; d < 4; d++) /* the neighbour to our north sends southwards, and so on */
      if (neighbour[d] >= 0)
        MPI_Irecv(recv + d * n, n, MPI_DOUBLE, neighbour[d], HALO_TAG + opposite[d], MPI_COMM_WORLD, &req[k++]);
    for (int d = 0; d < 4; d++)
      if (neighbour[d] >= 0)
        MPI_Isend(send + d * n, n, MPI_DOUBLE, neighbour[d], HALO_TAG + d, MPI_COMM_WORLD, &req[k++]), sent++;
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
  }
  double t1 = MPI_Wtime();

  /* Results to rank 0: the block's sum (1 double), then t0, t1, sweep time (3 u64). */
  double sum = 0;
  uint64_t t[3] = {(uint64_t)(t0 * 1e9), (uint64_t)(t1 * 1e9), 0};
  if (me != 0) {
    MPI_Send(&sum, 1, MPI_DOUBLE, 0, RESULT_TAG, MPI_COMM_WORLD), sent++;
    MPI_Send(t, 3, MPI_UINT64_T, 0, RESULT_TAG, MPI_COMM_WORLD), sent++;
  } else {
    for (int r = 1; r < size; r++) {
      MPI_Recv(&sum, 1, MPI_DOUBLE, r, RESULT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(t, 3, MPI_UINT64_T, r, RESULT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  long total = 0;
  MPI_Reduce(&sent, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("ranks %d grid %dx%d n %d iterations %ld messages %ld\n", size, px, py, n, iters, total);
    printf("wtime_s %.6f\n", t1 - t0);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
