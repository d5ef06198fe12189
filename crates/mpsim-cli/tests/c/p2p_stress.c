/* The p2p stress program of the Rust tests (crates/mpsim/tests/p2p_stress.rs, `stress_rank`)
 * in C: the same plan from the same seed (the same xorshift generator, drawn in the same
 * order), the same calls in the same order, so that a simulated run gives the Rust version's
 * report. Many random messages in every send mode, through blocking, nonblocking and
 * persistent (MPI_Send_init + MPI_Start) calls, of 0 B to 256 KiB, received through specific
 * and wildcard receives; every rank checks that each message meant for it arrives once, intact
 * and in non-overtaking order. Why the plan cannot deadlock: see the Rust file's doc.
 * Usage: p2p_stress SEED TOTAL (the Rust test's seeds, e.g. 0x5EED000000080001 20000).
 * Prints "p2p_stress: rank R checked M messages, B bytes" per rank; exit 1 on a failure. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (256 * 1024)
#define EAGER_THRESHOLD (64 * 1024)
#define TAGS_PER_ROUND 3
#define SENTINEL 0xA5

enum mode { STANDARD, SYNCHRONOUS, BUFFERED, READY };
enum call { BLOCKING, NONBLOCKING, START_SEND };
enum style { SPECIFIC, ANY_SOURCE_STYLE, ANY_TAG_STYLE };

typedef struct { uint64_t s; } rng_t;

static rng_t rng_new(uint64_t seed) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  rng_t r = {z ? z : 1};
  return r;
}
static uint64_t next_u64(rng_t *r) {
  uint64_t x = r->s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  r->s = x;
  return x;
}
static uint64_t below(rng_t *r, uint64_t n) { return next_u64(r) % n; }
static size_t between(rng_t *r, size_t lo, size_t hi) { return lo + below(r, hi - lo + 1); }
static int percent(rng_t *r, uint64_t p) { return below(r, 100) < p; }

/* The payload of the seq-th message src sends. */
static void payload(uint32_t src, uint64_t seq, size_t bytes, unsigned char *out) {
  rng_t g = rng_new(((uint64_t)src << 48) ^ seq ^ 0xDA7A000000000000ull);
  for (size_t at = 0; at < bytes; at += 8) {
    uint64_t w = next_u64(&g);
    for (size_t k = 0; k < 8 && at + k < bytes; k++) out[at + k] = (unsigned char)(w >> (8 * k));
  }
}

static size_t random_size(rng_t *r) {
  static const size_t edges[5] = {0, 1, EAGER_THRESHOLD, EAGER_THRESHOLD + 1, MAX_BYTES};
  uint64_t k = below(r, 200);
  if (k <= 3) return edges[below(r, 5)];
  if (k <= 83) return between(r, 0, 16);
  if (k <= 153) return between(r, 17, 1024);
  if (k <= 187) return between(r, 1025, 16 * 1024);
  if (k <= 197) return between(r, 16 * 1024 + 1, EAGER_THRESHOLD);
  return between(r, EAGER_THRESHOLD + 1, MAX_BYTES);
}

typedef struct {
  uint32_t src, dst;
  int tag;
  size_t bytes;
  int mode, call, wild;
  uint64_t seq;
} msg_t;

typedef struct {
  msg_t *msgs;
  size_t n;
  int *styles;
} round_t;

typedef struct {
  round_t *rounds;
  size_t n;
} plan_t;

/* Stable sort of a round's messages by (source, ready last): insertion sort keeps plan order. */
static void sort_round(msg_t *m, size_t n) {
  for (size_t i = 1; i < n; i++) {
    msg_t x = m[i];
    size_t j = i;
    while (j > 0 && (m[j - 1].src > x.src ||
                     (m[j - 1].src == x.src && (m[j - 1].mode == READY) > (x.mode == READY)))) {
      m[j] = m[j - 1];
      j--;
    }
    m[j] = x;
  }
}

static plan_t plan_new(uint64_t seed, uint32_t ranks, size_t total) {
  rng_t rng = rng_new(seed);
  uint64_t *next_seq = calloc(ranks, sizeof *next_seq);
  plan_t p = {NULL, 0};
  size_t left = total, cap = 0;
  while (left > 0) {
    size_t index = p.n;
    size_t n = between(&rng, 16, 160);
    if (n > left) n = left;
    uint64_t base_tag = (uint64_t)index * TAGS_PER_ROUND;
    msg_t *msgs = calloc(n, sizeof *msgs);
    for (size_t i = 0; i < n; i++) {
      uint32_t src, dst;
      int tag;
      if (i > 0 && percent(&rng, 50)) {
        msg_t o = msgs[below(&rng, i)];
        src = o.src, dst = o.dst, tag = o.tag;
      } else {
        src = (uint32_t)below(&rng, ranks);
        dst = (uint32_t)below(&rng, ranks);
        tag = (int)(base_tag + below(&rng, TAGS_PER_ROUND));
      }
      msgs[i].src = src, msgs[i].dst = dst, msgs[i].tag = tag;
      msgs[i].bytes = random_size(&rng);
      msgs[i].mode = (int)below(&rng, 4);
      uint64_t c = below(&rng, 4);
      msgs[i].call = c == 0 ? BLOCKING : c == 1 ? START_SEND : NONBLOCKING;
      msgs[i].wild = percent(&rng, 50);
    }
    /* A ready send s -> d needs a non-ready message d -> s in the round (as drawn: a ready
     * send made standard here does not count). */
    char *answered = calloc(n, 1);
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n && !answered[i]; j++)
        answered[i] = msgs[j].mode != READY && msgs[j].src == msgs[i].dst && msgs[j].dst == msgs[i].src;
    for (size_t i = 0; i < n; i++)
      if (msgs[i].mode == READY && !answered[i]) msgs[i].mode = STANDARD;
    free(answered);
    sort_round(msgs, n);
    for (size_t i = 0; i < n; i++) msgs[i].seq = next_seq[msgs[i].src]++;
    /* The ready sender waits for d's first non-ready message to it: a specific receive. */
    for (size_t i = 0; i < n; i++) {
      if (msgs[i].mode != READY) continue;
      for (size_t j = 0; j < n; j++)
        if (msgs[j].src == msgs[i].dst && msgs[j].dst == msgs[i].src && msgs[j].mode != READY) {
          msgs[j].wild = 0;
          break;
        }
    }
    int *styles = calloc(ranks, sizeof *styles);
    for (uint32_t r = 0; r < ranks; r++) styles[r] = (int)below(&rng, 3);
    if (p.n == cap) {
      cap = cap ? 2 * cap : 64;
      p.rounds = realloc(p.rounds, cap * sizeof *p.rounds);
    }
    p.rounds[p.n].msgs = msgs, p.rounds[p.n].n = n, p.rounds[p.n].styles = styles;
    p.n++;
    left -= n;
  }
  free(next_seq);
  return p;
}

/* One receive to post: pattern, capacity, and the message it is planned for. */
typedef struct {
  int source, tag;
  size_t capacity;
  const msg_t *planned;
} spec_t;

static int fail(int me, const char *what) {
  fprintf(stderr, "p2p_stress: rank %d: %s\n", me, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

static int issue(const msg_t *m, unsigned char *data, MPI_Request *req) {
  *req = MPI_REQUEST_NULL;
  int n = (int)m->bytes, d = (int)m->dst, t = m->tag;
  MPI_Comm w = MPI_COMM_WORLD;
  if (m->call == BLOCKING) {
    switch (m->mode) {
      case STANDARD: return MPI_Send(data, n, MPI_BYTE, d, t, w);
      case SYNCHRONOUS: return MPI_Ssend(data, n, MPI_BYTE, d, t, w);
      case BUFFERED: return MPI_Bsend(data, n, MPI_BYTE, d, t, w);
      default: return MPI_Rsend(data, n, MPI_BYTE, d, t, w);
    }
  }
  if (m->call == NONBLOCKING) {
    switch (m->mode) {
      case STANDARD: return MPI_Isend(data, n, MPI_BYTE, d, t, w, req);
      case SYNCHRONOUS: return MPI_Issend(data, n, MPI_BYTE, d, t, w, req);
      case BUFFERED: return MPI_Ibsend(data, n, MPI_BYTE, d, t, w, req);
      default: return MPI_Irsend(data, n, MPI_BYTE, d, t, w, req);
    }
  }
  int rc;
  switch (m->mode) {
    case STANDARD: rc = MPI_Send_init(data, n, MPI_BYTE, d, t, w, req); break;
    case SYNCHRONOUS: rc = MPI_Ssend_init(data, n, MPI_BYTE, d, t, w, req); break;
    case BUFFERED: rc = MPI_Bsend_init(data, n, MPI_BYTE, d, t, w, req); break;
    default: rc = MPI_Rsend_init(data, n, MPI_BYTE, d, t, w, req); break;
  }
  return rc ? rc : MPI_Start(req);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5EED000000080001ull;
  size_t total = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 20000;
  plan_t plan = plan_new(seed, (uint32_t)size, total);

  /* Never zero, so that detach always has a buffer to return. */
  size_t attached = MPI_BSEND_OVERHEAD;
  for (size_t r = 0; r < plan.n; r++)
    for (size_t i = 0; i < plan.rounds[r].n; i++)
      if (plan.rounds[r].msgs[i].src == (uint32_t)me && plan.rounds[r].msgs[i].mode == BUFFERED)
        attached += plan.rounds[r].msgs[i].bytes + MPI_BSEND_OVERHEAD;
  char *bsend_buf = malloc(attached);
  MPI_Buffer_attach(bsend_buf, (int)attached);

  unsigned char *scratch = malloc(MAX_BYTES);
  unsigned long long messages = 0, bytes_in = 0;
  char what[256];
  for (size_t r = 0; r < plan.n; r++) {
    const round_t *rd = &plan.rounds[r];
    const msg_t *incoming[160];
    size_t nin = 0;
    for (size_t i = 0; i < rd->n; i++)
      if (rd->msgs[i].dst == (uint32_t)me) incoming[nin++] = &rd->msgs[i];
    int style = rd->styles[me];
    spec_t specs[160];
    size_t ns = 0;
    /* Specific receives first, then the wildcard ones, each as large as the largest message
     * it could match. */
    for (int pass = 0; pass < 2; pass++)
      for (size_t i = 0; i < nin; i++) {
        const msg_t *m = incoming[i];
        int wild = style != SPECIFIC && m->wild;
        if (wild != pass) continue;
        spec_t s = {m->src, m->tag, 0, m};
        if (wild && style == ANY_SOURCE_STYLE) s.source = MPI_ANY_SOURCE;
        if (wild && style == ANY_TAG_STYLE) s.tag = MPI_ANY_TAG;
        for (size_t j = 0; j < nin; j++) {
          const msg_t *o = incoming[j];
          int match = (s.source == MPI_ANY_SOURCE || (uint32_t)s.source == o->src) &&
                      (s.tag == MPI_ANY_TAG || s.tag == o->tag);
          if (match && o->bytes > s.capacity) s.capacity = o->bytes;
        }
        specs[ns++] = s;
      }

    /* 1. Post every receive of the round. */
    unsigned char *bufs[160];
    MPI_Request recvs[160];
    MPI_Status statuses[160];
    int early[160] = {0};
    for (size_t i = 0; i < ns; i++) {
      bufs[i] = malloc(specs[i].capacity + 1);
      memset(bufs[i], SENTINEL, specs[i].capacity + 1);
      MPI_Irecv(bufs[i], (int)specs[i].capacity, MPI_BYTE, specs[i].source, specs[i].tag,
                MPI_COMM_WORLD, &recvs[i]);
    }

    /* 2. Send, in plan order (non-ready first); before a ready send to d, wait for the
     *    specific receive of a non-ready message from d. */
    MPI_Request sends[160], persistent[160];
    unsigned char *send_bufs[160];
    int nsends = 0, npersistent = 0;
    for (size_t i = 0; i < rd->n; i++) {
      const msg_t *m = &rd->msgs[i];
      if (m->src != (uint32_t)me) continue;
      if (m->mode == READY) {
        size_t k = 0;
        while (k < ns && !(specs[k].source == (int)m->dst && specs[k].tag != MPI_ANY_TAG &&
                           specs[k].planned->mode != READY))
          k++;
        if (k == ns) return fail(me, "a ready send without a specific receive to wait for");
        /* (Done already if an earlier ready send of the round waited for it.) */
        if (!early[k]) MPI_Waitall(1, &recvs[k], &statuses[k]);
        early[k] = 1;
        if (statuses[k].MPI_SOURCE != (int)m->dst) return fail(me, "handshake receive");
      }
      /* A nonblocking send's buffer is its own until the send completes. */
      unsigned char *data = m->call == BLOCKING ? scratch : malloc(m->bytes + 1);
      payload((uint32_t)me, m->seq, m->bytes, data);
      MPI_Request req;
      issue(m, data, &req);
      if (req != MPI_REQUEST_NULL) {
        send_bufs[nsends] = data;
        sends[nsends++] = req;
        if (m->call == START_SEND) persistent[npersistent++] = req;
      } else if (data != scratch) {
        free(data);
      }
    }

    /* 3. Wait for everything, then check what arrived, in posting order. */
    MPI_Waitall(nsends, sends, MPI_STATUSES_IGNORE);
    for (int i = 0; i < npersistent; i++) MPI_Request_free(&persistent[i]);
    for (int i = 0; i < nsends; i++) free(send_bufs[i]);
    MPI_Status late[160];
    MPI_Waitall((int)ns, recvs, late);
    size_t seen[160] = {0}; /* per incoming message: taken */
    for (size_t i = 0; i < ns; i++) {
      MPI_Status st = early[i] ? statuses[i] : late[i];
      int src = st.MPI_SOURCE, tag = st.MPI_TAG, count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      const spec_t *s = &specs[i];
      if (!((s->source == MPI_ANY_SOURCE || s->source == src) &&
            (s->tag == MPI_ANY_TAG || s->tag == tag))) {
        snprintf(what, sizeof what, "round %zu receive #%zu got a message from %d tag %d", r, i,
                 src, tag);
        return fail(me, what);
      }
      /* The channel's next message not seen yet (its messages come in send order). */
      const msg_t *m = NULL;
      for (size_t j = 0; j < nin && !m; j++)
        if (!seen[j] && incoming[j]->src == (uint32_t)src && incoming[j]->tag == tag) {
          seen[j] = 1;
          m = incoming[j];
        }
      if (!m) {
        snprintf(what, sizeof what, "round %zu: a message from %d tag %d not planned (duplicate?)",
                 r, src, tag);
        return fail(me, what);
      }
      if ((size_t)count != m->bytes) {
        snprintf(what, sizeof what, "round %zu: channel (%d, %d) seq %llu: %d bytes, not %zu",
                 r, src, tag, (unsigned long long)m->seq, count, m->bytes);
        return fail(me, what);
      }
      payload((uint32_t)src, m->seq, m->bytes, scratch);
      if (memcmp(bufs[i], scratch, m->bytes) != 0) {
        snprintf(what, sizeof what, "round %zu: seq %llu from %d corrupt", r,
                 (unsigned long long)m->seq, src);
        return fail(me, what);
      }
      for (size_t k = m->bytes; k <= s->capacity; k++)
        if (bufs[i][k] != SENTINEL) return fail(me, "bytes written past the message");
      messages++;
      bytes_in += m->bytes;
    }
    for (size_t j = 0; j < nin; j++)
      if (!seen[j]) return fail(me, "a message was lost");
    for (size_t i = 0; i < ns; i++) free(bufs[i]);
  }
  void *back;
  int back_size;
  MPI_Buffer_detach(&back, &back_size);
  if ((size_t)back_size != attached || back != bsend_buf) return fail(me, "buffer_detach size");
  printf("p2p_stress: rank %d checked %llu messages, %llu bytes\n", me, messages, bytes_in);
  MPI_Finalize();
  return 0;
}
