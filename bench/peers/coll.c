/* One collective timed, the C twin of mpsim's examples/allreduce.rs and examples/bcast.rs.
 * Usage: coll allreduce|bcast BYTES [ITERS=10]
 *   allreduce: MPI_Allreduce of BYTES/8 doubles (MPI_SUM) into a second buffer;
 *   bcast:     MPI_Bcast of BYTES bytes (MPI_BYTE) from rank 0.
 * After a barrier, ITERS calls back to back; each rank checks its result (the sum, or rank 0's
 * bytes), and rank 0 prints the mean time of one call as
 *   result example=OP backend=c ranks=N bytes=BYTES iterations=ITERS time_ns=T
 * (MPI_Wtime: host time under Open MPI, simulated time under SMPI). Exit status 1 if any rank
 * got a wrong result. Run: mpirun -np N ./coll allreduce 8  (or smpirun -np N ...). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char byte_at(long it, long i) { return (unsigned char)(i * 31 + it); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 3 || (strcmp(argv[1], "allreduce") && strcmp(argv[1], "bcast"))) {
    if (rank == 0) fprintf(stderr, "usage: %s allreduce|bcast BYTES [ITERS]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int allreduce = !strcmp(argv[1], "allreduce");
  long bytes = atol(argv[2]);
  long iters = argc > 3 ? atol(argv[3]) : 10;
  long count = allreduce ? bytes / 8 : bytes;
  size_t alloc = (size_t)(bytes > 0 ? bytes : 1);
  double *mine = malloc(alloc), *sum = malloc(alloc);
  unsigned char *buf = malloc(alloc);
  if (!mine || !sum || !buf) MPI_Abort(MPI_COMM_WORLD, 3);
  int wrong = 0;

  if (allreduce)
    for (long i = 0; i < count; i++) mine[i] = 1.0 + (double)(i % 7);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long it = 0; it < iters; it++) {
    if (allreduce) {
      MPI_Allreduce(mine, sum, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      /* Small integers: every order of summation gives the exact sum. */
      for (long i = 0; i < count; i++) wrong |= sum[i] != (1.0 + (double)(i % 7)) * n;
    } else {
      if (rank == 0)
        for (long i = 0; i < count; i++) buf[i] = byte_at(it, i);
      MPI_Bcast(buf, (int)count, MPI_BYTE, 0, MPI_COMM_WORLD);
      for (long i = 0; i < count; i++) wrong |= buf[i] != byte_at(it, i);
    }
  }
  double t = MPI_Wtime() - t0;

  int any_wrong = 0;
  MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0) {
    if (any_wrong) fprintf(stderr, "%s: a rank got a wrong result\n", argv[1]);
    printf("result example=%s backend=c ranks=%d bytes=%ld iterations=%ld time_ns=%.0f\n",
           argv[1], n, bytes, iters, t / (double)iters * 1e9);
  }
  free(mine); free(sum); free(buf);
  MPI_Finalize();
  return any_wrong;
}
