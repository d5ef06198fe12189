/* What libraries built on MPI use: attribute caching with copy and delete callbacks
 * (communicators and datatypes, and MPI-1's names), the program's error handlers and error
 * codes, info objects, group ranges, MPI_Comm_split_type, the array datatypes
 * (subarray, darray), and how a datatype was made (envelope, contents). Every rank checks its results; rank 0 prints "library: ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

static int copies = 0, deletes = 0, self_deleted_in_finalize = 0;

static int copy_plus_one(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old; (void)key;
    CHECK(extra == (void *)&copies, "copy callback's extra state");
    copies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int key, void *val, void *extra) {
    (void)c; (void)key; (void)val; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old; (void)key; (void)extra; (void)in; (void)out; (void)flag;
    return MPI_ERR_OTHER;
}

static int at_finalize(MPI_Comm c, int key, void *val, void *extra) {
    (void)key; (void)val; (void)extra;
    /* MPI still works here: libraries flush their state in this callback. */
    int r;
    if (c == MPI_COMM_SELF && MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS) self_deleted_in_finalize = 1;
    return MPI_SUCCESS;
}

static int handled = 0, handled_code = 0;
static void my_handler(MPI_Comm *c, int *code, ...) {
    (void)c;
    handled++;
    handled_code = *code;
}

static int type_deletes = 0;
static int type_delete(MPI_Datatype t, int key, void *val, void *extra) {
    (void)t; (void)key; (void)val; (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static void tens_then_units(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = a[i] * 10 + b[i];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Predefined attributes. */
    int *tag_ub, *wtime_global, *universe, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtime_global, &flag);
    CHECK(flag && (*wtime_global == 0 || *wtime_global == 1), "MPI_WTIME_IS_GLOBAL");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    CHECK(!flag || *universe >= size, "MPI_UNIVERSE_SIZE");

    /* A keyval with callbacks: set, get, copied by dup (value + 1), deleted by free. */
    int key, key_dup, key_none;
    MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &copies);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key_none, NULL);
    CHECK(key != MPI_KEYVAL_INVALID && key != key_dup && key_dup != key_none, "distinct keyvals");
    char base[8];
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, key, base);
    MPI_Comm_set_attr(c1, key_dup, base + 4);
    MPI_Comm_set_attr(c1, key_none, base + 5);
    void *v;
    MPI_Comm_get_attr(c1, key, &v, &flag);
    CHECK(flag && v == base, "get what was set");
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag);
    CHECK(!flag, "another communicator does not have it");
    MPI_Comm_dup(c1, &c2);
    CHECK(copies == 1, "copy callback ran once");
    MPI_Comm_get_attr(c2, key, &v, &flag);
    CHECK(flag && v == base + 1, "copy callback's value");
    MPI_Comm_get_attr(c2, key_dup, &v, &flag);
    CHECK(flag && v == base + 4, "MPI_COMM_DUP_FN copies the value");
    MPI_Comm_get_attr(c2, key_none, &v, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    /* Replacing a value deletes the old one; deleting runs the callback; freeing deletes the rest. */
    MPI_Comm_set_attr(c1, key, base + 2);
    CHECK(deletes == 1, "replacing deletes the old value");
    MPI_Comm_delete_attr(c1, key);
    CHECK(deletes == 2, "delete_attr runs the callback");
    MPI_Comm_get_attr(c1, key, &v, &flag);
    CHECK(!flag, "deleted");
    MPI_Comm_free(&c1);
    CHECK(deletes == 3 && c1 == MPI_COMM_NULL, "free deletes what is left (key_none)");
    /* A freed keyval: no new attributes, the existing ones stay until their object goes. */
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval sets MPI_KEYVAL_INVALID");
    MPI_Comm_free(&c2);
    CHECK(deletes == 4, "attribute of a freed keyval deleted with its communicator");
    MPI_Comm_free_keyval(&key_dup);
    MPI_Comm_free_keyval(&key_none);

    /* A failing copy callback fails the dup with its code. */
    int bad;
    MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &bad, NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_attr(MPI_COMM_WORLD, bad, base);
    MPI_Comm c3 = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c3);
    CHECK(rc == MPI_ERR_OTHER, "failing copy callback fails the dup");
    MPI_Comm_delete_attr(MPI_COMM_WORLD, bad);
    MPI_Comm_free_keyval(&bad);
    /* Keyval misuse is MPI_ERR_KEYVAL. */
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, 12345, base) == MPI_ERR_KEYVAL, "unknown keyval");
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, base) == MPI_ERR_KEYVAL, "predefined keyval cannot be set");

    /* MPI-1's names. */
    int old_key;
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &old_key, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, old_key, base + 3);
    MPI_Attr_get(MPI_COMM_WORLD, old_key, &v, &flag);
    CHECK(flag && v == base + 3, "MPI_Attr_get");
    MPI_Attr_delete(MPI_COMM_WORLD, old_key);
    MPI_Keyval_free(&old_key);

    /* Datatype attributes: copied by Type_dup, deleted by Type_free. */
    int tkey;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &tkey, NULL);
    MPI_Datatype t1, t2;
    MPI_Type_contiguous(2, MPI_INT, &t1);
    MPI_Type_set_attr(t1, tkey, base + 6);
    MPI_Type_dup(t1, &t2);
    MPI_Type_get_attr(t2, tkey, &v, &flag);
    CHECK(flag && v == base + 6, "type attribute copied by Type_dup");
    MPI_Type_free(&t1);
    MPI_Type_free(&t2);
    CHECK(type_deletes == 2, "type attributes deleted by Type_free");
    MPI_Type_free_keyval(&tkey);

    /* Attributes on MPI_COMM_SELF are deleted at the start of MPI_Finalize. */
    int fkey;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &fkey, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, fkey, base);

    /* The program's error handler: called with the code, then the call returns it. */
    MPI_Errhandler eh, got;
    MPI_Comm_create_errhandler(my_handler, &eh);
    MPI_Comm c4;
    MPI_Comm_dup(MPI_COMM_WORLD, &c4);
    MPI_Comm_set_errhandler(c4, eh);
    MPI_Comm_get_errhandler(c4, &got);
    CHECK(got == eh, "get_errhandler gives the program's handler");
    int x = 0;
    rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, c4);
    CHECK(rc != MPI_SUCCESS && handled == 1, "program's handler called on an error");
    int cls;
    MPI_Error_class(handled_code, &cls);
    CHECK(cls == MPI_ERR_RANK, "the handler saw the rank error");
    MPI_Comm c5;
    MPI_Comm_dup(c4, &c5);
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, c5);
    CHECK(handled == 2, "a dup inherits the handler");
    MPI_Comm_free(&c5);
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free");

    /* Added error classes and codes. */
    int myclass, mycode, len;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&myclass);
    MPI_Add_error_code(myclass, &mycode);
    MPI_Add_error_string(mycode, "my library's error");
    MPI_Error_class(mycode, &cls);
    CHECK(cls == myclass && mycode != myclass, "added code's class");
    MPI_Error_string(mycode, text, &len);
    CHECK(strcmp(text, "my library's error") == 0 && len == (int)strlen(text), "added code's string");
    int *lastused;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag);
    CHECK(flag && *lastused >= mycode, "MPI_LASTUSEDCODE");
    MPI_Comm_call_errhandler(c4, mycode);
    CHECK(handled == 3 && handled_code == mycode, "Comm_call_errhandler");
    MPI_Comm_free(&c4);

    /* Info objects. */
    MPI_Info info, info2;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "two");
    MPI_Info_set(info, "alpha", "one");
    int nkeys, vlen;
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys == 2, "Info_get_nkeys");
    char key0[MPI_MAX_INFO_KEY], val[64];
    MPI_Info_get_nthkey(info, 0, key0);
    CHECK(strcmp(key0, "alpha") == 0, "Info_get_nthkey");
    MPI_Info_get_valuelen(info, "beta", &vlen, &flag);
    CHECK(flag && vlen == 3, "Info_get_valuelen");
    MPI_Info_get(info, "alpha", 63, val, &flag);
    CHECK(flag && strcmp(val, "one") == 0, "Info_get");
    MPI_Info_dup(info, &info2);
    MPI_Info_delete(info, "alpha");
    MPI_Info_get(info, "alpha", 63, val, &flag);
    CHECK(!flag, "Info_delete");
    MPI_Info_get(info2, "alpha", 63, val, &flag);
    CHECK(flag, "Info_dup is a copy");
    CHECK(MPI_Info_delete(info, "nothing") == MPI_ERR_INFO_NOKEY, "deleting a missing key");
    MPI_Info_free(&info);
    MPI_Info_free(&info2);

    /* Group ranges. */
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = {{size - 1, 0, -2}};
    MPI_Group_range_incl(world, 1, range, &g);
    int gsize, grank;
    MPI_Group_size(g, &gsize);
    CHECK(gsize == (size + 1) / 2, "Group_range_incl size");
    int first = 0, firstw;
    MPI_Group_translate_ranks(g, 1, &first, world, &firstw);
    CHECK(firstw == size - 1, "Group_range_incl order");
    MPI_Group_free(&g);
    int evens[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_excl(world, 1, evens, &g);
    MPI_Group_size(g, &gsize);
    CHECK(gsize == size / 2, "Group_range_excl size");
    MPI_Group_rank(g, &grank);
    CHECK((rank % 2 == 1) == (grank != MPI_UNDEFINED), "Group_range_excl members");
    if (g != MPI_GROUP_EMPTY) MPI_Group_free(&g);
    MPI_Group_free(&world);

    /* Split by shared memory: every rank shares this one node. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    CHECK(nsize == size, "Comm_split_type SHARED");
    MPI_Comm_free(&node);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &node);
    CHECK(node == MPI_COMM_NULL, "Comm_split_type UNDEFINED");

    /* A subarray: the 2x3 box at (1,1) of a 4x5 array, sent to the next rank as 6 ints. */
    int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
    MPI_Datatype box;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &box);
    MPI_Type_commit(&box);
    MPI_Aint lb, extent;
    int tsize;
    MPI_Type_get_extent(box, &lb, &extent);
    MPI_Type_size(box, &tsize);
    CHECK(lb == 0 && extent == 20 * (MPI_Aint)sizeof(int) && tsize == 6 * (int)sizeof(int), "subarray extent and size");
    int a[20], boxed[6];
    for (int i = 0; i < 20; i++) a[i] = 100 * rank + i;
    MPI_Sendrecv(a, 1, box, (rank + 1) % size, 7, boxed, 6, MPI_INT, (rank + size - 1) % size, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int from = (rank + size - 1) % size;
    int want[6] = {6, 7, 8, 11, 12, 13};
    for (int i = 0; i < 6; i++) CHECK(boxed[i] == 100 * from + want[i], "subarray data (C order)");
    MPI_Type_free(&box);
    /* Fortran order: sizes are (rows fastest). The 2x1 box at (2,3) of a 4x5 column-major array. */
    int fsizes[2] = {4, 5}, fsubs[2] = {2, 1}, fstarts[2] = {2, 3};
    MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &box);
    MPI_Type_commit(&box);
    int packed[2], pos = 0;
    MPI_Pack(a, 1, box, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    CHECK(packed[0] == a[3 * 4 + 2] && packed[1] == a[3 * 4 + 3], "subarray data (Fortran order)");
    MPI_Type_free(&box);

    /* A darray: 8 elements, cyclic(2) over 2 processes in one dimension; process 1 of 2 owns
     * 2,3 and 6,7. And block over a 2x2 grid of a 4x4 array. */
    int g1[1] = {8}, d1[1] = {MPI_DISTRIBUTE_CYCLIC}, a1[1] = {2}, p1[1] = {2};
    MPI_Datatype cyc;
    MPI_Type_create_darray(2, 1, 1, g1, d1, a1, p1, MPI_ORDER_C, MPI_INT, &cyc);
    MPI_Type_commit(&cyc);
    MPI_Type_size(cyc, &tsize);
    MPI_Type_get_extent(cyc, &lb, &extent);
    CHECK(tsize == 4 * (int)sizeof(int) && extent == 8 * (MPI_Aint)sizeof(int), "darray cyclic size and extent");
    int got4[4];
    pos = 0;
    MPI_Pack(a, 1, cyc, got4, sizeof got4, &pos, MPI_COMM_WORLD);
    CHECK(got4[0] == a[2] && got4[1] == a[3] && got4[2] == a[6] && got4[3] == a[7], "darray cyclic data");
    MPI_Type_free(&cyc);
    int g2[2] = {4, 4}, d2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        a2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p2[2] = {2, 2};
    MPI_Datatype blk;
    MPI_Type_create_darray(4, 3, 2, g2, d2, a2, p2, MPI_ORDER_C, MPI_INT, &blk);
    MPI_Type_commit(&blk);
    pos = 0;
    MPI_Pack(a, 1, blk, got4, sizeof got4, &pos, MPI_COMM_WORLD);
    CHECK(got4[0] == a[10] && got4[1] == a[11] && got4[2] == a[14] && got4[3] == a[15], "darray block data (process 3 of a 2x2 grid)");
    MPI_Type_free(&blk);
    CHECK(MPI_Type_create_darray(4, 0, 1, g1, d1, a1, p1, MPI_ORDER_C, MPI_INT, &blk) == MPI_ERR_ARG,
          "darray whose grid does not hold the processes");

    /* MPI_Comm_idup: the new communicator works once the request completes. */
    MPI_Comm ic;
    MPI_Request ireq;
    MPI_Comm_idup(MPI_COMM_WORLD, &ic, &ireq);
    MPI_Wait(&ireq, MPI_STATUS_IGNORE);
    int isum = 0, one = 1;
    MPI_Allreduce(&one, &isum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(isum == size && ireq == MPI_REQUEST_NULL, "Comm_idup");
    MPI_Comm_free(&ic);

    /* How a datatype was made: envelope and contents, even after its parts were freed. */
    MPI_Datatype vec, st, parts[2], back[2];
    int ni, na, nd, comb, iv[8];
    MPI_Aint av[4];
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope of a predefined type");
    MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec);
    MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "envelope of a vector");
    MPI_Type_get_contents(vec, 8, 4, 2, iv, av, back);
    CHECK(iv[0] == 3 && iv[1] == 2 && iv[2] == 5 && back[0] == MPI_DOUBLE, "contents of a vector");
    int lens[2] = {1, 2};
    MPI_Aint displs[2] = {0, 16};
    parts[0] = MPI_CHAR;
    parts[1] = vec;
    MPI_Type_create_struct(2, lens, displs, parts, &st);
    MPI_Type_free(&vec);
    MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2, "envelope of a struct");
    MPI_Type_get_contents(st, 8, 4, 2, iv, av, back);
    CHECK(iv[0] == 2 && iv[1] == 1 && iv[2] == 2 && av[1] == 16 && back[0] == MPI_CHAR, "contents of a struct");
    MPI_Type_get_envelope(back[1], &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR, "a derived part comes back as an equal new datatype");
    MPI_Type_size(back[1], &tsize);
    CHECK(tsize == 6 * (int)sizeof(double), "the part's size");
    MPI_Type_free(&back[1]);
    MPI_Type_free(&st);
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &box);
    MPI_Type_get_envelope(box, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1, "envelope of a subarray");
    MPI_Type_free(&box);

    /* Reductions here and now: a predefined operation, the program's own, an undefined one. */
    int in3[3] = {1, 2, 3}, io3[3] = {10, 20, 30};
    MPI_Reduce_local(in3, io3, 3, MPI_INT, MPI_SUM);
    CHECK(io3[0] == 11 && io3[1] == 22 && io3[2] == 33, "Reduce_local MPI_SUM");
    double dx[2] = {1.5, -2}, dy[2] = {1, 1};
    MPI_Reduce_local(dx, dy, 2, MPI_DOUBLE, MPI_MAX);
    CHECK(dy[0] == 1.5 && dy[1] == 1, "Reduce_local MPI_MAX");
    MPI_Op digits;
    MPI_Op_create(tens_then_units, 0, &digits);
    int lo = 4, hi = 5;
    MPI_Reduce_local(&lo, &hi, 1, MPI_INT, digits);
    CHECK(hi == 45, "Reduce_local with the program's operation (inbuf first)");
    MPI_Op_free(&digits);
    CHECK(MPI_Reduce_local(dx, dy, 2, MPI_DOUBLE, MPI_BAND) == MPI_ERR_OP, "Reduce_local MPI_BAND on doubles");

    /* Sized types by class, Fortran handles, request status without completing. */
    MPI_Datatype m;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
    MPI_Type_size(m, &tsize);
    CHECK(tsize == 8, "Type_match_size REAL 8");
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &m);
    MPI_Type_size(m, &tsize);
    CHECK(tsize == 2, "Type_match_size INTEGER 2");
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m) == MPI_ERR_ARG, "no integer of 3 bytes");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "Comm_c2f/f2c");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "Type_c2f/f2c");
    int token = rank, got_token = -1, sflag = 0, idx = -2, outc = -2, inds[2];
    MPI_Request rr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    MPI_Request_get_status_any(2, rr, &idx, &sflag, MPI_STATUS_IGNORE);
    CHECK(sflag && idx == MPI_UNDEFINED, "Request_get_status_any of null requests");
    MPI_Irecv(&got_token, 1, MPI_INT, (rank + size - 1) % size, 8, MPI_COMM_WORLD, &rr[0]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 8, MPI_COMM_WORLD, &rr[1]);
    do MPI_Request_get_status_all(2, rr, &sflag, sts); while (!sflag);
    CHECK(sts[0].MPI_SOURCE == (rank + size - 1) % size && got_token == (rank + size - 1) % size,
          "Request_get_status_all: complete, data delivered, status given");
    MPI_Request_get_status_some(2, rr, &outc, inds, MPI_STATUSES_IGNORE);
    CHECK(outc == 2, "Request_get_status_some: both complete, not freed");
    MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
    CHECK(rr[0] == MPI_REQUEST_NULL && rr[1] == MPI_REQUEST_NULL, "freed by the wait");

    /* Huge datatypes: a contiguous one of INT_MAX bytes is one run, a vector of a billion
     * strided blocks one run repeated; a vector of 2^25 vectors whose blocks do not continue
     * each other is more than this version holds, MPI_ERR_TYPE rather than memory. */
    MPI_Datatype huge;
    CHECK(MPI_Type_contiguous(2147483647, MPI_CHAR, &huge) == MPI_SUCCESS, "contiguous of INT_MAX");
    MPI_Type_size(huge, &tsize);
    CHECK(tsize == 2147483647, "its size");
    MPI_Type_free(&huge);
    CHECK(MPI_Type_vector(1 << 30, 1, 3, MPI_INT, &huge) == MPI_SUCCESS, "a billion strided blocks");
    MPI_Type_free(&huge);
    MPI_Datatype pair_apart;
    MPI_Type_vector(2, 1, 3, MPI_INT, &pair_apart);
    CHECK(MPI_Type_vector(1 << 25, 1, 2, pair_apart, &huge) == MPI_ERR_TYPE, "2^25 separate vectors");
    MPI_Type_free(&pair_apart);
    CHECK(MPI_Type_vector(1 << 30, 2, 2, MPI_INT, &huge) == MPI_SUCCESS, "a billion blocks that meet");
    MPI_Type_free(&huge);

    /* MPI-4's large-count forms: the same calls with MPI_Count counts. */
    long long ring_in = -1, ring_out = rank;
    MPI_Status lst;
    MPI_Count lc;
    lst.MPI_ERROR = 12345; /* MPI: only calls returning MPI_ERR_IN_STATUS set it */
    MPI_Sendrecv_c(&ring_out, 1, MPI_LONG_LONG, (rank + 1) % size, 9, &ring_in, 1, MPI_LONG_LONG,
                   (rank + size - 1) % size, 9, MPI_COMM_WORLD, &lst);
    MPI_Get_count_c(&lst, MPI_LONG_LONG, &lc);
    CHECK(ring_in == (rank + size - 1) % size && lc == 1, "Sendrecv_c, Get_count_c");
    CHECK(lst.MPI_ERROR == 12345, "a status's MPI_ERROR is the program's");
    long long lsum = 0, lone = 1;
    MPI_Allreduce_c(&lone, &lsum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(lsum == size, "Allreduce_c");
    MPI_Datatype three;
    MPI_Type_contiguous_c(3, MPI_INT, &three);
    MPI_Count lsize, llb, lext;
    MPI_Type_size_c(three, &lsize);
    MPI_Type_get_extent_c(three, &llb, &lext);
    CHECK(lsize == 12 && llb == 0 && lext == 12, "Type_contiguous_c, Type_size_c, Type_get_extent_c");
    int three_in[3] = {4, 5, 6}, three_out[3] = {0, 0, 0};
    char packbuf[64];
    MPI_Count ppos = 0, psize = 0;
    MPI_Pack_size_c(3, MPI_INT, MPI_COMM_WORLD, &psize);
    MPI_Pack_c(three_in, 3, MPI_INT, packbuf, sizeof packbuf, &ppos, MPI_COMM_WORLD);
    CHECK(psize == 12 && ppos == 12, "Pack_size_c, Pack_c");
    ppos = 0;
    MPI_Unpack_c(packbuf, sizeof packbuf, &ppos, three_out, 3, MPI_INT, MPI_COMM_WORLD);
    CHECK(ppos == 12 && three_out[0] == 4 && three_out[2] == 6, "Unpack_c");
    MPI_Type_free(&three);
    CHECK(MPI_Send_c(&lone, (MPI_Count)1 << 40, MPI_LONG_LONG, rank, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT,
          "a count beyond int's range is MPI_ERR_COUNT");

    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (!self_deleted_in_finalize) {
        fprintf(stderr, "rank %d: MPI_COMM_SELF's attribute not deleted in MPI_Finalize\n", rank);
        all++;
    }
    if (rank == 0) printf(all ? "library: %d failures\n" : "library: ok\n", all);
    return all != 0;
}
