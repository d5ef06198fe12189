/* The total exchange of crates/mpsim/examples/bsp_exchange.rs, with Open MPI, for
 * bench/bsp-exchange.sh: each step every rank sends one message of BYTES bytes to every other
 * rank, STEPS times after one warm-up step, and checks what it received.
 *   p2p: MPI_Irecv from and MPI_Isend to every other rank, MPI_Waitall (no barrier: every
 *        message is expected, which is what a BSP sync's exchange needs besides its barrier);
 *   rma: MPI_Put into every other rank's window between MPI_Win_fence calls (BSPlib's DRMA
 *        on MPI one-sided, as BSPonMPI does); the window has two halves used in turn, since
 *        a put of the next step may land while a slower rank still checks this one.
 * Rank 0 prints "time_ns=T msgs_per_s=X bytes_per_s=Y" like the example.
 * Usage: exchange p2p|rma BYTES STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char fill(int from, long k, long i) { return (unsigned char)(from * 31 + i + k); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc != 4) {
    if (me == 0) fprintf(stderr, "usage: exchange p2p|rma BYTES STEPS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rma = strcmp(argv[1], "rma") == 0;
  long bytes = atol(argv[2]), steps = atol(argv[3]);
  unsigned char *out = malloc(bytes), *win_mem = malloc(2 * bytes * p), *in = win_mem;
  MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * p);
  MPI_Win win;
  if (rma) MPI_Win_create(win_mem, 2 * bytes * p, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rma) MPI_Win_fence(0, win);
  double start = 0;
  for (long k = 0; k <= steps; k++) {
    if (k == 1) start = MPI_Wtime();
    for (long i = 0; i < bytes; i++) out[i] = fill(me, k, i);
    long half = (k % 2) * bytes * p;
    in = win_mem + (rma ? half : 0);
    if (rma) {
      for (int t = 0; t < p; t++)
        if (t != me) MPI_Put(out, bytes, MPI_BYTE, t, half + (MPI_Aint)me * bytes, bytes, MPI_BYTE, win);
      MPI_Win_fence(0, win);
    } else {
      int n = 0;
      for (int t = 0; t < p; t++)
        if (t != me) MPI_Irecv(in + (long)t * bytes, bytes, MPI_BYTE, t, 0, MPI_COMM_WORLD, &reqs[n++]);
      for (int t = 0; t < p; t++)
        if (t != me) MPI_Isend(out, bytes, MPI_BYTE, t, 0, MPI_COMM_WORLD, &reqs[n++]);
      MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    }
    for (int t = 0; t < p; t++)
      for (long i = 0; t != me && i < bytes; i++)
        if (in[(long)t * bytes + i] != fill(t, k, i)) {
          fprintf(stderr, "rank %d: step %ld: not what was sent\n", me, k);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
  }
  double secs = MPI_Wtime() - start;
  if (me == 0) {
    double msgs = (double)steps * p * (p - 1);
    printf("time_ns=%.0f msgs_per_s=%.0f bytes_per_s=%.0f\n", secs * 1e9, msgs / secs, msgs * bytes / secs);
  }
  if (rma) MPI_Win_free(&win);
  free(out); free(win_mem); free(reqs);
  MPI_Finalize();
  return 0;
}
