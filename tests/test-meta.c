/*
 * test-meta.c - the META device (ggml_backend_meta_device): the split axis
 * names, the split state's layout, devices over [CPU, CPU] and [CPU],
 * their buffer type, set/get/memset of split and mirrored tensors, a
 * two-layer MLP and a norm computed on the META backend against the same
 * graph on one CPU backend (and the first product against a double
 * reference), bad arguments and bad split states, and a META device over
 * the BLAS device when its plugin is built.
 *
 * The split callback reads a tensor's name: its first letter chooses the
 * state (see split_by_name).
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "tap.h"

typedef struct ggml_backend_meta_split_state split_state;

/* The layout upstream's struct has: an enum, 256 int64, 16 uint32, one uint32. */
_Static_assert(offsetof(split_state, axis) == 0, "axis first");
_Static_assert(offsetof(split_state, ne) == 8, "ne after the padded enum");
_Static_assert(sizeof(((split_state *) 0)->ne) == 16 * 16 * sizeof(int64_t), "ne size");
_Static_assert(offsetof(split_state, nr) == 8 + 2048, "nr after ne");
_Static_assert(sizeof(((split_state *) 0)->nr) == 16 * sizeof(uint32_t), "nr size");
_Static_assert(offsetof(split_state, n_segments) == 8 + 2048 + 64, "n_segments last");
_Static_assert(sizeof(split_state) == 2128, "struct size");
_Static_assert(GGML_BACKEND_META_MAX_DEVICES == 16, "max devices");
_Static_assert(GGML_BACKEND_DEVICE_TYPE_META == 4, "META is the fifth device type");

/*
 * 'r' rows (axis 1), 'c' columns (axis 0), '2' axis 2, 'm' mirrored, all
 * split evenly; 's' axis 1 in two segments, the first repeated twice
 * ([2,1] x2 then [2,1] for 9 rows over two devices, [3] x2 then [3] on one); 'x' axis 7, 'p'
 * PARTIAL, 'b' pieces adding up to one too many.
 */
static split_state split_by_name(const struct ggml_tensor *t, void *ud)
{
    size_t n = *(const size_t *) ud;
    split_state st;
    memset(&st, 0, sizeof st);
    switch (t->name[0]) {
    case 'r': st.axis = GGML_BACKEND_SPLIT_AXIS_1; break;
    case 'c': st.axis = GGML_BACKEND_SPLIT_AXIS_0; break;
    case '2': st.axis = GGML_BACKEND_SPLIT_AXIS_2; break;
    case 's':
        st.axis = GGML_BACKEND_SPLIT_AXIS_1;
        st.n_segments = 2;
        st.nr[0] = 2, st.nr[1] = 1;
        for (size_t s = 0; s < 2; s++) {
            st.ne[s * n + 0] = n > 1 ? 2 : 3;
            if (n > 1)
                st.ne[s * n + 1] = 1;
        }
        break;
    case 'x': st.axis = (enum ggml_backend_meta_split_axis) 7; break;
    case 'p': st.axis = GGML_BACKEND_SPLIT_AXIS_PARTIAL; break;
    case 'b':
        st.axis = GGML_BACKEND_SPLIT_AXIS_1;
        st.n_segments = 1;
        st.nr[0] = 1;
        st.ne[0] = t->ne[1];
        st.ne[1] = 1;
        break;
    default: st.axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED; break;
    }
    return st;
}

static size_t two = 2, one = 1;

static void fill(float *x, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float) ((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

static void test_names(void)
{
    static const struct { enum ggml_backend_meta_split_axis axis; const char *name; } names[] = {
        { GGML_BACKEND_SPLIT_AXIS_0, "0" }, { GGML_BACKEND_SPLIT_AXIS_1, "1" },
        { GGML_BACKEND_SPLIT_AXIS_2, "2" }, { GGML_BACKEND_SPLIT_AXIS_3, "3" },
        { GGML_BACKEND_SPLIT_AXIS_MIRRORED, "MIRRORED" }, { GGML_BACKEND_SPLIT_AXIS_PARTIAL, "PARTIAL" },
        { GGML_BACKEND_SPLIT_AXIS_NONE, "NONE" }, { GGML_BACKEND_SPLIT_AXIS_UNKNOWN, "UNKNOWN" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        is_str(ggml_backend_meta_split_axis_name(names[i].axis), names[i].name, "split axis %d is named %s",
               (int) names[i].axis, names[i].name);
    is_int(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 10, "MIRRORED is 10");
    is_int(GGML_BACKEND_SPLIT_AXIS_PARTIAL, 11, "PARTIAL is 11");
    is_int(GGML_BACKEND_SPLIT_AXIS_NONE, 98, "NONE is 98");
    is_int(GGML_BACKEND_SPLIT_AXIS_UNKNOWN, 99, "UNKNOWN is 99");
    tap_log_errors();
    ok(ggml_backend_meta_split_axis_name((enum ggml_backend_meta_split_axis) 4) == NULL, "axis 4 has no name");
    logged_one_error("axis 4: one error");
}

static void test_bad_arguments(ggml_backend_dev_t cpu)
{
    ggml_backend_dev_t devs[17];
    for (int i = 0; i < 17; i++)
        devs[i] = cpu;
    tap_log_errors();
    ok(ggml_backend_meta_device(devs, 0, split_by_name, &two) == NULL, "n_devs 0: NULL");
    logged_one_error("n_devs 0: one error");
    ok(ggml_backend_meta_device(devs, 17, split_by_name, &two) == NULL, "n_devs 17: NULL");
    logged_one_error("n_devs 17: one error");
    ok(ggml_backend_meta_device(NULL, 2, split_by_name, &two) == NULL, "devs NULL: NULL");
    logged_one_error("devs NULL: one error");
    ok(ggml_backend_meta_device(devs, 2, NULL, &two) == NULL, "callback NULL: NULL");
    logged_one_error("callback NULL: one error");
    ggml_backend_dev_t with_null[2] = { cpu, NULL };
    ok(ggml_backend_meta_device(with_null, 2, split_by_name, &two) == NULL, "a NULL device: NULL");
    logged_one_error("a NULL device: one error");
    ggml_backend_dev_t sixteen = ggml_backend_meta_device(devs, 16, split_by_name, &two);
    ok(sixteen != NULL, "16 devices are allowed");
    ggml_backend_dev_t nested[1] = { sixteen };
    ok(ggml_backend_meta_device(nested, 1, split_by_name, &two) == NULL, "a META device of a META device: NULL");
    logged_one_error("nested: one error");
}

static void test_device(ggml_backend_dev_t meta, ggml_backend_dev_t cpu, size_t n, const char *name)
{
    is_str(ggml_backend_dev_name(meta), name, "%s: name", name);
    is_int(ggml_backend_dev_type(meta), GGML_BACKEND_DEVICE_TYPE_META, "%s: type META", name);
    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(meta, &props);
    is_str(props.name, name, "%s: props name", name);
    ok(props.description != NULL && strncmp(props.description, "Meta(", 5) == 0, "%s: props description", name);
    is_int(props.type, GGML_BACKEND_DEVICE_TYPE_META, "%s: props type", name);
    size_t free_cpu, total_cpu, free_meta, total_meta;
    ggml_backend_dev_memory(cpu, &free_cpu, &total_cpu);
    ggml_backend_dev_memory(meta, &free_meta, &total_meta);
    is_uint(total_meta, n * total_cpu, "%s: total memory is the sum", name);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(meta);
    ok(buft != NULL, "%s: buffer type", name);
    is_ptr(ggml_backend_buft_get_device(buft), meta, "%s: its buffer type's device", name);
    is_str(ggml_backend_buft_name(buft), name, "%s: buffer type name", name);
    ok(!ggml_backend_buft_is_host(buft), "%s: buffer type is not host memory", name);
    ok(ggml_backend_dev_supports_buft(meta, buft), "%s: supports its buffer type", name);
    ok(!ggml_backend_dev_supports_buft(meta, ggml_backend_cpu_buffer_type()), "%s: not the CPU's", name);
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(meta);
    is_str(ggml_backend_reg_name(reg), "Meta", "%s: registry", name);
}

/* A set/get round trip of tensor t of n floats, whole and in part, and a memset. */
static void round_trip(struct ggml_tensor *t, const char *what)
{
    const size_t bytes = ggml_nbytes(t);
    const size_t count = bytes / sizeof(float);
    float *in = malloc(bytes), *out = malloc(bytes);
    fill(in, count, (unsigned) bytes);
    ggml_backend_tensor_set(t, in, 0, bytes);
    memset(out, 0, bytes);
    ggml_backend_tensor_get(t, out, 0, bytes);
    ok(memcmp(in, out, bytes) == 0, "%s: whole set/get round trip", what);

    float patch[5] = { 1, 2, 3, 4, 5 };
    const size_t at = (count / 3) * sizeof(float);
    ggml_backend_tensor_set(t, patch, at, sizeof patch);
    memcpy((char *) in + at, patch, sizeof patch);
    ggml_backend_tensor_get(t, out, 0, bytes);
    ok(memcmp(in, out, bytes) == 0, "%s: a part set", what);
    float part[5];
    ggml_backend_tensor_get(t, part, at, sizeof part);
    ok(memcmp(part, patch, sizeof part) == 0, "%s: a part read", what);

    ggml_backend_tensor_memset(t, 0, sizeof(float), 3 * sizeof(float));
    memset((char *) in + sizeof(float), 0, 3 * sizeof(float));
    ggml_backend_tensor_get(t, out, 0, bytes);
    ok(memcmp(in, out, bytes) == 0, "%s: memset of a part", what);
    free(in);
    free(out);
}

static void test_buffers(ggml_backend_dev_t meta, const char *name)
{
    struct ggml_init_params params = { .mem_size = 16 * ggml_tensor_overhead(), .no_alloc = true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *ts[] = {
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 37, 5),
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 11),
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 13, 3),
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 9),
        ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 5),
    };
    ggml_set_name(ts[0], "c37x5");
    ggml_set_name(ts[1], "r7x11");
    ggml_set_name(ts[2], "m13x3");
    ggml_set_name(ts[3], "s5x9");
    ggml_set_name(ts[4], "2_3x2x5");
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(meta));
    ok(buf != NULL, "%s: tensors allocated", name);
    if (buf != NULL) {
        for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
            char what[96];
            snprintf(what, sizeof what, "%s: %s", name, ts[i]->name);
            round_trip(ts[i], what);
        }
        /* a quantized tensor split along dimension 0 in whole blocks */
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);

    ctx = ggml_init(params);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 96, 3);
    ggml_set_name(q, "cq");
    buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(meta));
    ok(buf != NULL, "%s: Q8_0 tensor allocated", name);
    if (buf != NULL) {
        unsigned char *in = malloc(ggml_nbytes(q)), *out = malloc(ggml_nbytes(q));
        for (size_t i = 0; i < ggml_nbytes(q); i++)
            in[i] = (unsigned char) (i * 7 + 3);
        ggml_backend_tensor_set(q, in, 0, ggml_nbytes(q));
        ggml_backend_tensor_get(q, out, 0, ggml_nbytes(q));
        ok(memcmp(in, out, ggml_nbytes(q)) == 0, "%s: Q8_0 split in blocks round trip", name);
        free(in);
        free(out);
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
}

static void test_bad_states(ggml_backend_dev_t meta)
{
    static const char *const bad[] = { "x_axis7", "p_partial", "b_sum" };
    for (size_t i = 0; i < 3; i++) {
        struct ggml_init_params params = { .mem_size = 4 * ggml_tensor_overhead(), .no_alloc = true };
        struct ggml_context *ctx = ggml_init(params);
        struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
        ggml_set_name(t, bad[i]);
        tap_log_errors();
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(meta));
        ok(buf == NULL, "%s: allocation refused", bad[i]);
        ok(tap_log_errors() >= 1, "%s: logged", bad[i]);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }
}

enum { K = 19, N = 23, O = 17, M = 3 };

struct mlp {
    struct ggml_context *wctx, *gctx;
    struct ggml_tensor *x, *w1, *b1, *w2, *b2;
    struct ggml_tensor *h, *y, *norm;
    struct ggml_cgraph *graph;
};

/* x mirrored; W1 split by rows, b1 by columns (matching h), W2 by columns
 * (a PARTIAL product), b2 mirrored. */
static void mlp_build(struct mlp *m)
{
    struct ggml_init_params wp = { .mem_size = 8 * ggml_tensor_overhead(), .no_alloc = true };
    m->wctx = ggml_init(wp);
    m->x = ggml_new_tensor_2d(m->wctx, GGML_TYPE_F32, K, M);
    m->w1 = ggml_new_tensor_2d(m->wctx, GGML_TYPE_F32, K, N);
    m->b1 = ggml_new_tensor_1d(m->wctx, GGML_TYPE_F32, N);
    m->w2 = ggml_new_tensor_2d(m->wctx, GGML_TYPE_F32, N, O);
    m->b2 = ggml_new_tensor_1d(m->wctx, GGML_TYPE_F32, O);
    ggml_set_name(m->x, "m_x");
    ggml_set_name(m->w1, "r_w1");
    ggml_set_name(m->b1, "c_b1");
    ggml_set_name(m->w2, "c_w2");
    ggml_set_name(m->b2, "m_b2");
    struct ggml_init_params gp = { .mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead(), .no_alloc = true };
    m->gctx = ggml_init(gp);
    m->h = ggml_mul_mat(m->gctx, m->w1, m->x);
    ggml_set_name(m->h, "h");
    ggml_set_output(m->h);
    struct ggml_tensor *a = ggml_gelu(m->gctx, ggml_add(m->gctx, m->h, m->b1));
    m->y = ggml_add(m->gctx, ggml_mul_mat(m->gctx, m->w2, a), m->b2);
    ggml_set_name(m->y, "y");
    ggml_set_output(m->y);
    m->norm = ggml_norm(m->gctx, m->y, 1e-5f);
    ggml_set_name(m->norm, "norm");
    ggml_set_output(m->norm);
    m->graph = ggml_new_graph(m->gctx);
    ggml_build_forward_expand(m->graph, m->norm);
}

static void mlp_free(struct mlp *m)
{
    ggml_free(m->gctx);
    ggml_free(m->wctx);
}

struct mlp_data {
    float x[K * M], w1[K * N], b1[N], w2[N * O], b2[O];
};

static void mlp_set(struct mlp *m, const struct mlp_data *d)
{
    ggml_backend_tensor_set(m->x, d->x, 0, sizeof d->x);
    ggml_backend_tensor_set(m->w1, d->w1, 0, sizeof d->w1);
    ggml_backend_tensor_set(m->b1, d->b1, 0, sizeof d->b1);
    ggml_backend_tensor_set(m->w2, d->w2, 0, sizeof d->w2);
    ggml_backend_tensor_set(m->b2, d->b2, 0, sizeof d->b2);
}

struct mlp_out {
    float h[N * M], y[O * M], norm[O * M];
};

/* Allocates and computes the MLP on backend (weights and activations in its buffer type). */
static bool mlp_run(ggml_backend_t backend, const struct mlp_data *d, struct mlp_out *out)
{
    struct mlp m;
    mlp_build(&m);
    ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(backend);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(m.wctx, buft);
    ggml_gallocr_t galloc = ggml_gallocr_new(buft);
    bool done = wbuf != NULL && galloc != NULL && ggml_gallocr_alloc_graph(galloc, m.graph);
    if (done) {
        mlp_set(&m, d);
        done = ggml_backend_graph_compute(backend, m.graph) == GGML_STATUS_SUCCESS;
    }
    if (done) {
        ggml_backend_tensor_get(m.h, out->h, 0, sizeof out->h);
        ggml_backend_tensor_get(m.y, out->y, 0, sizeof out->y);
        ggml_backend_tensor_get(m.norm, out->norm, 0, sizeof out->norm);
    }
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(wbuf);
    mlp_free(&m);
    return done;
}

static double max_rel_diff(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double) a[i] - (double) b[i]) / (fabs((double) b[i]) + 1e-3);
        worst = diff > worst ? diff : worst;
    }
    return worst;
}

static void test_mlp(ggml_backend_dev_t meta, const char *name, const struct mlp_data *d, const struct mlp_out *ref)
{
    ggml_backend_t backend = ggml_backend_dev_init(meta, NULL);
    ok(backend != NULL, "%s: backend", name);
    if (backend == NULL)
        return;
    is_str(ggml_backend_name(backend), name, "%s: backend name", name);
    struct mlp_out out;
    bool done = mlp_run(backend, d, &out);
    ok(done, "%s: MLP computed", name);
    if (done) {
        ok(max_rel_diff(out.h, ref->h, N * M) < 1e-5, "%s: first product as on one CPU", name);
        ok(max_rel_diff(out.y, ref->y, O * M) < 1e-5, "%s: MLP output as on one CPU (%.2g)", name,
           max_rel_diff(out.y, ref->y, O * M));
        ok(max_rel_diff(out.norm, ref->norm, O * M) < 1e-4, "%s: norm as on one CPU", name);
        double worst = 0;
        for (int j = 0; j < M; j++) {
            for (int i = 0; i < N; i++) {
                double sum = 0;
                for (int k = 0; k < K; k++)
                    sum += (double) d->w1[i * K + k] * d->x[j * K + k];
                double diff = fabs(sum - out.h[j * N + i]);
                worst = diff > worst ? diff : worst;
            }
        }
        ok(worst < 1e-5, "%s: first product against a double reference (%.2g)", name, worst);
    }
    /* the backend refuses a graph whose tensors live elsewhere */
    struct mlp m;
    mlp_build(&m);
    ggml_backend_buffer_t cpu_buf = ggml_backend_alloc_ctx_tensors_from_buft(m.wctx, ggml_backend_cpu_buffer_type());
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ggml_gallocr_alloc_graph(galloc, m.graph);
    tap_log_errors();
    ok(ggml_backend_graph_compute(backend, m.graph) != GGML_STATUS_SUCCESS, "%s: graph in CPU buffers refused", name);
    ok(tap_log_errors() >= 1, "%s: refusal logged", name);
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(cpu_buf);
    mlp_free(&m);
    ggml_backend_free(backend);
}

/* The scheduler over [META, CPU]: the META backend takes the graph whose
 * weights it holds; alone it is refused (the last backend must be a CPU). */
static void test_sched(ggml_backend_dev_t meta, const struct mlp_data *d, const struct mlp_out *ref)
{
    ggml_backend_t backends[2] = { ggml_backend_dev_init(meta, NULL), ggml_backend_cpu_init() };
    tap_log_errors();
    ok(ggml_backend_sched_new(backends, NULL, 1, 256, false, true) == NULL, "sched: META alone refused");
    logged_one_error("sched: META alone: one error");
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);
    ok(sched != NULL, "sched over [META, CPU]");
    struct mlp m;
    mlp_build(&m);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(m.wctx, ggml_backend_dev_buffer_type(meta));
    bool done = sched != NULL && wbuf != NULL && ggml_backend_sched_alloc_graph(sched, m.graph);
    ok(done, "sched: graph allocated");
    if (done) {
        mlp_set(&m, d);
        is_int(ggml_backend_sched_graph_compute(sched, m.graph), GGML_STATUS_SUCCESS, "sched: computed");
        is_ptr(ggml_backend_sched_get_tensor_backend(sched, m.y), backends[0], "sched: the output ran on META");
        struct mlp_out out;
        ggml_backend_tensor_get(m.y, out.y, 0, sizeof out.y);
        ggml_backend_tensor_get(m.norm, out.norm, 0, sizeof out.norm);
        ok(max_rel_diff(out.y, ref->y, O * M) < 1e-5, "sched: MLP output as on one CPU");
        ok(max_rel_diff(out.norm, ref->norm, O * M) < 1e-4, "sched: norm as on one CPU");
    }
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(wbuf);
    mlp_free(&m);
    ggml_backend_free(backends[0]);
    ggml_backend_free(backends[1]);
}

static void test_blas(void)
{
    const char *dir = getenv("BLAS_PLUGIN_DIR");
    if (dir == NULL || dir[0] == '\0') {
        tap_skip(1, "the BLAS plugin is not built");
        return;
    }
    setenv("GGML_BACKEND_PATH", dir, 1);
    ggml_backend_load_all();
    ggml_backend_dev_t blas = ggml_backend_dev_by_name("BLAS");
    if (blas == NULL) {
        tap_skip(1, "the BLAS plugin did not load");
        return;
    }
    ggml_backend_dev_t devs[2] = { blas, blas };
    ggml_backend_dev_t meta = ggml_backend_meta_device(devs, 2, split_by_name, &two);
    ok(meta != NULL, "META over [BLAS, BLAS]");
    is_str(ggml_backend_dev_name(meta), "Meta(BLAS,BLAS)", "its name");
    test_buffers(meta, "Meta(BLAS,BLAS)");
}

int main(void)
{
    tap_capture_log();
    test_names();
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    test_bad_arguments(cpu);

    ggml_backend_dev_t pair[2] = { cpu, cpu };
    ggml_backend_dev_t meta2 = ggml_backend_meta_device(pair, 2, split_by_name, &two);
    ggml_backend_dev_t meta1 = ggml_backend_meta_device(pair, 1, split_by_name, &one);
    ok(meta2 != NULL && meta1 != NULL, "META devices over [CPU, CPU] and [CPU]");
    if (meta2 == NULL || meta1 == NULL)
        return tap_done();
    is_ptr(ggml_backend_meta_device(pair, 2, split_by_name, &two), meta2, "the same arguments give the same device");
    test_device(meta2, cpu, 2, "Meta(CPU,CPU)");
    test_device(meta1, cpu, 1, "Meta(CPU)");
    test_buffers(meta2, "Meta(CPU,CPU)");
    test_buffers(meta1, "Meta(CPU)");
    test_bad_states(meta2);

    struct mlp_data d;
    fill(d.x, K * M, 1);
    fill(d.w1, K * N, 2);
    fill(d.b1, N, 3);
    fill(d.w2, N * O, 4);
    fill(d.b2, O, 5);
    struct mlp_out ref;
    ggml_backend_t cpu_backend = ggml_backend_dev_init(cpu, NULL);
    ok(mlp_run(cpu_backend, &d, &ref), "MLP computed on one CPU");
    ggml_backend_free(cpu_backend);
    test_mlp(meta2, "Meta(CPU,CPU)", &d, &ref);
    test_mlp(meta1, "Meta(CPU)", &d, &ref);
    test_sched(meta2, &d, &ref);

    test_blas();
    return tap_done();
}
