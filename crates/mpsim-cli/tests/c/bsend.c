/* Buffered sends that do not fit in the attached buffer (MPI 3.6). With MPI_ERRORS_RETURN
 * ("return", the default) the call fails with the class MPI_ERR_BUFFER, sends nothing, and the
 * program goes on: a send that fits still goes, and after a larger buffer is attached the
 * large message goes too; the receiver gets exactly the messages that went, with the types
 * they were sent with. "fatal": under MPI_ERRORS_ARE_FATAL the same overflow ends the run. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char *what) {
    if (!ok) {
        printf("bsend: FAILED: %s\n", what);
        failures++;
    }
}

static int error_class(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "return";
    double big[100];
    for (int i = 0; i < 100; i++) big[i] = i * 0.5;
    int four[4] = {7, 8, 9, 10};

    if (!strcmp(what, "fatal")) {
        if (rank == 0 && size > 1) {
            char small[16];
            MPI_Buffer_attach(small, (int)sizeof small);
            MPI_Bsend(big, 100, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0 && size > 1) {
        int small = (int)sizeof four + MPI_BSEND_OVERHEAD;
        char *buf = malloc((size_t)small);
        expect(MPI_Buffer_attach(buf, small) == MPI_SUCCESS, "attach");

        int rc = MPI_Bsend(big, 100, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
        expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_BUFFER, "Bsend overflow is MPI_ERR_BUFFER");

        MPI_Request r = MPI_REQUEST_NULL;
        rc = MPI_Ibsend(big, 100, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, &r);
        expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_BUFFER, "Ibsend overflow is MPI_ERR_BUFFER");

        /* The small message still fits: same tag as the failed ones, another type. */
        expect(MPI_Bsend(four, 4, MPI_INT, 1, 5, MPI_COMM_WORLD) == MPI_SUCCESS, "Bsend that fits");

        void *back = NULL;
        int back_size = -1;
        expect(MPI_Buffer_detach(&back, &back_size) == MPI_SUCCESS, "detach");
        expect(back == buf && back_size == small, "detach gives the buffer back");

        int large = (int)sizeof big + MPI_BSEND_OVERHEAD;
        char *lbuf = malloc((size_t)large);
        expect(MPI_Buffer_attach(lbuf, large) == MPI_SUCCESS, "attach a larger buffer");
        expect(MPI_Bsend(big, 100, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD) == MPI_SUCCESS, "Bsend after the larger attach");
        /* The larger buffer is in use until the message is delivered: an Ibsend that does not
         * fit beside it fails, and its request is left untouched. */
        r = MPI_REQUEST_NULL;
        rc = MPI_Ibsend(big, 100, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD, &r);
        expect(error_class(rc) == MPI_ERR_BUFFER || rc == MPI_SUCCESS, "Ibsend beside a held message");
        if (rc == MPI_SUCCESS) MPI_Wait(&r, MPI_STATUS_IGNORE);
        int sent_twice = rc == MPI_SUCCESS;
        MPI_Send(&sent_twice, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        expect(MPI_Buffer_detach(&back, &back_size) == MPI_SUCCESS && back == lbuf, "second detach");
        free(buf);
        free(lbuf);
    } else if (rank == 1) {
        int got[4] = {0};
        MPI_Status st;
        MPI_Recv(got, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        expect(n == 4 && got[0] == 7 && got[3] == 10, "the message that fitted");
        double gotd[100] = {0};
        MPI_Recv(gotd, 100, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(gotd[99] == 49.5, "the large message after the larger attach");
        int sent_twice = 0;
        MPI_Recv(&sent_twice, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (sent_twice) MPI_Recv(gotd, 100, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all == 0 ? "bsend: ok\n" : "bsend: %d failures\n", all);
    MPI_Finalize();
    return 0;
}
