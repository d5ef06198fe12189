/* `mpsim calibrate --backend mpi`: the ping-pong of crates/mpsim-cli/src/calibrate.rs measured
 * through the system MPI. mpsim embeds this file, builds it with `mpicc -O2` and runs it with
 * `mpirun -np 2`; nothing else should need to run it.
 *
 * The schedule comes from mpsim on the command line, so that both backends time exactly the
 * same batches (the Rust side owns the sizes and the iteration counts, this side owns nothing):
 *
 *   calibrate REPS CHUNKS WARMUP0:ITERS0 SIZE:WARMUP:ITERS...
 *
 * A batch is: a 0-byte MPI_Sendrecv to line the two ranks up, WARMUP untimed iterations, then
 * ITERS timed ones split into CHUNKS chunks; its result is the smallest chunk mean round trip
 * in ns. An iteration is rank 0 sending the ping (a 0-byte MPI_Send for the reference batch,
 * else SIZE bytes by MPI_Bsend or MPI_Ssend) and waiting for rank 1's 0-byte MPI_Send answer.
 * Each repetition runs the reference batch, then for each SIZE a bsend and an ssend batch.
 * Rank 0 prints one line per batch, in that order (mpsim keeps the minimum over repetitions):
 *
 *   rtt0 NS
 *   bsend SIZE NS
 *   ssend SIZE NS
 *
 * Times come from CLOCK_MONOTONIC, the clock Rust's `Instant` reads on Linux. Bad arguments
 * print a message on stderr and exit 2; MPI errors abort (MPI_ERRORS_ARE_FATAL). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG = 1, SYNC_TAG = 2, MAX_SIZES = 64 };
enum ping { PING_ZERO, PING_BSEND, PING_SSEND };

struct batch_plan {
  long long size, warmup, iters;
};

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* One batch: the smallest mean round trip in ns over its chunks (meaningful on rank 0). */
static double batch(int rank, enum ping ping, char *buf, struct batch_plan p, long long chunks) {
  int peer = 1 - rank, n = (int)p.size;
  long long chunk = (p.iters + chunks - 1) / chunks;
  MPI_Sendrecv(NULL, 0, MPI_CHAR, peer, SYNC_TAG, NULL, 0, MPI_CHAR, peer, SYNC_TAG,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double best = -1;
  long long t0 = now_ns();
  for (long long k = 0; k < p.warmup + p.iters; k++) {
    if (k >= p.warmup && (k - p.warmup) % chunk == 0) {
      if (k > p.warmup) {
        double mean = (double)(now_ns() - t0) / (double)chunk;
        if (best < 0 || mean < best) best = mean;
      }
      t0 = now_ns();
    }
    if (rank == 0) {
      switch (ping) {
      case PING_ZERO: MPI_Send(buf, 0, MPI_CHAR, peer, TAG, MPI_COMM_WORLD); break;
      case PING_BSEND: MPI_Bsend(buf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD); break;
      case PING_SSEND: MPI_Ssend(buf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD); break;
      }
      MPI_Recv(buf, 0, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 0, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
    }
  }
  long long last = (p.iters - 1) % chunk + 1;
  double mean = (double)(now_ns() - t0) / (double)last;
  return best < 0 || mean < best ? mean : best;
}

/* A positive integer argument, or -1. */
static long long positive(const char *s, char **end) {
  long long v = strtoll(s, end, 10);
  return *end == s || v < 1 ? -1 : v;
}

static int bad_usage(int rank, const char *why, const char *arg) {
  if (rank == 0)
    fprintf(stderr,
            "calibrate: %s%s%s%s\n"
            "usage: calibrate REPS CHUNKS WARMUP0:ITERS0 SIZE:WARMUP:ITERS... (at most %d sizes)\n",
            why, *arg ? " `" : "", arg, *arg ? "`" : "", MAX_SIZES);
  MPI_Finalize();
  return 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks != 2) {
    if (rank == 0) fprintf(stderr, "calibrate: needs exactly 2 ranks, got %d\n", nranks);
    MPI_Finalize();
    return 2;
  }
  if (argc < 5 || argc - 4 > MAX_SIZES) return bad_usage(rank, "wrong argument count", "");
  char *end;
  long long reps = positive(argv[1], &end), chunks = positive(argv[2], &end);
  if (reps < 1) return bad_usage(rank, "bad REPS", argv[1]);
  if (chunks < 1) return bad_usage(rank, "bad CHUNKS", argv[2]);
  /* plans[0] is the 0-byte reference batch. */
  struct batch_plan plans[MAX_SIZES + 1];
  int nplans = argc - 3;
  long long max_size = 0;
  for (int i = 0; i < nplans; i++) {
    const char *a = argv[3 + i];
    struct batch_plan p = {0, 0, 0};
    if (i > 0) {
      p.size = positive(a, &end);
      if (p.size < 1 || p.size > (1LL << 30) || *end != ':') return bad_usage(rank, "bad size", a);
      a = end + 1;
    }
    p.warmup = strtoll(a, &end, 10);
    if (end == a || p.warmup < 0 || *end != ':') return bad_usage(rank, "bad warm-up", argv[3 + i]);
    a = end + 1;
    p.iters = positive(a, &end);
    if (p.iters < 1 || *end != '\0') return bad_usage(rank, "bad iterations", argv[3 + i]);
    if (p.size > max_size) max_size = p.size;
    plans[i] = p;
  }

  char *buf = malloc((size_t)max_size + 1);
  /* Room for two messages in flight, as on the threads backend: a buffered message whose slot
   * is not yet reclaimed never makes the next MPI_Bsend overflow. */
  int attached_size = (int)(2 * (max_size + MPI_BSEND_OVERHEAD));
  char *attached = malloc((size_t)attached_size);
  if (!buf || !attached) {
    fprintf(stderr, "calibrate: rank %d: out of memory for %lld-byte buffers\n", rank, max_size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(buf, 'a', (size_t)max_size + 1);
  MPI_Buffer_attach(attached, attached_size);

  for (long long r = 0; r < reps; r++) {
    double rtt0 = batch(rank, PING_ZERO, buf, plans[0], chunks);
    if (rank == 0) printf("rtt0 %.3f\n", rtt0);
    for (int i = 1; i < nplans; i++) {
      double b = batch(rank, PING_BSEND, buf, plans[i], chunks);
      double s = batch(rank, PING_SSEND, buf, plans[i], chunks);
      if (rank == 0) printf("bsend %lld %.3f\nssend %lld %.3f\n", plans[i].size, b, plans[i].size, s);
    }
    if (rank == 0) fflush(stdout);
  }

  void *detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  free(attached);
  free(buf);
  MPI_Finalize();
  return 0;
}
