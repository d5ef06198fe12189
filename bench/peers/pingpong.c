/* osu_latency-style blocking ping-pong between exactly 2 ranks, sizes 1 B, 8 B, 16 B .. 4 MiB.
 * One-way latency = round trip / 2; the whole sweep is repeated REPS times (argv[1], default 1)
 * and the minimum and median per size are printed.  Run: mpirun -np 2 ./pingpong [REPS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (4 << 20)

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "pingpong needs exactly 2 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int reps = argc > 1 ? atoi(argv[1]) : 1;
  if (reps < 1) reps = 1;

  int sizes[32], nsizes = 0;
  sizes[nsizes++] = 1;
  for (int s = 8; s <= MAX_SIZE; s *= 2) sizes[nsizes++] = s;

  char *buf = malloc(MAX_SIZE);
  memset(buf, 'a', MAX_SIZE);
  double *lat = malloc(sizeof(double) * reps * nsizes); /* lat[i * reps + r], one-way us */
  int peer = 1 - rank;

  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < nsizes; i++) {
      int n = sizes[i];
      int iters = n > 8192 ? 1000 : 10000, warmup = n > 8192 ? 10 : 100;
      double t0 = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      for (int k = 0; k < warmup + iters; k++) {
        if (k == warmup) t0 = MPI_Wtime();
        if (rank == 0) {
          MPI_Send(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
      }
      lat[i * reps + r] = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    }
  }

  if (rank == 0) {
    printf("# size_bytes min_latency_us median_latency_us bandwidth_MBps_at_min (reps=%d)\n", reps);
    for (int i = 0; i < nsizes; i++) {
      double *l = lat + i * reps;
      qsort(l, reps, sizeof(double), cmp);
      double med = reps % 2 ? l[reps / 2] : (l[reps / 2 - 1] + l[reps / 2]) / 2;
      printf("%d %.3f %.3f %.1f\n", sizes[i], l[0], med, sizes[i] / l[0]);
    }
  }
  free(lat);
  free(buf);
  MPI_Finalize();
  return 0;
}
