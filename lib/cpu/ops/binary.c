/*
 * ops/binary.c - ADD, SUB, MUL, DIV with broadcasting of src1 over src0.
 *
 * Types: src0, src1 and dst each F32, F16 or BF16, any combination; the
 * arithmetic is done in F32.  Threads split the rows of dst.  The reference
 * kernel converts each row to F32 scratch; the fast kernel works in place
 * when all three tensors are F32 with contiguous rows.  Both take the row
 * arithmetic from the kernel table (binary, binary_scalar: exact IEEE
 * operations, the same bits at every level).
 */
#include "config.h"

#include "ggml-impl.h"
#include "cpu-private.h"

static bool float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

static bool binary_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return a != NULL && b != NULL && float_type(dst->type) && float_type(a->type) &&
           float_type(b->type) && ggml_can_repeat(b, a) && ggml__same_shape(a, dst);
}

static enum ggml__binary_op binary_op_of(enum ggml_op op)
{
    switch (op) {
    case GGML_OP_SUB: return GGML__BINARY_SUB;
    case GGML_OP_MUL: return GGML__BINARY_MUL;
    case GGML_OP_DIV: return GGML__BINARY_DIV;
    default:          return GGML__BINARY_ADD;
    }
}

/*
 * out[i] = x[i] op y[i % ny] for i < n (y repeats when ny < n), with the
 * kernel table's rows: binary_scalar for ny == 1, binary (binary_stream
 * when stream) per repetition otherwise.  All levels give the same bits
 * (single IEEE operations).
 */
static void apply(const struct ggml__cpu_kernels *k, enum ggml__binary_op op, int64_t n, float *out,
                  const float *x, const float *y, int64_t ny, bool stream)
{
    if (ny == 1) {
        k->binary_scalar[op](n, out, x, y[0]);
        return;
    }
    void (*const rows)(int64_t, float *, const float *, const float *) =
        stream && k->binary_stream[op] != NULL ? k->binary_stream[op] : k->binary[op];
    for (int64_t start = 0; start < n; start += ny) {
        const int64_t len = n - start < ny ? n - start : ny;
        rows(len, out + start, x + start, y);
    }
}

static size_t binary_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    /* per thread: one row of src0 and one of src1, as F32 */
    return (size_t) n_tasks * 2 * (size_t) (dst->ne[0] + 16) * sizeof(float);
}

static void binary_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t ne0 = dst->ne[0], ne10 = b->ne[0];
    const bool fast = !params->use_ref && dst->type == GGML_TYPE_F32 && a->type == GGML_TYPE_F32 &&
                      b->type == GGML_TYPE_F32 && dst->nb[0] == sizeof(float) &&
                      a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float);
    const struct ggml__cpu_kernels *k = params->kernels;
    const enum ggml__binary_op op = binary_op_of(dst->op);
    float *xrow = (float *) params->wdata + (size_t) params->ith * 2 * (size_t) (ne0 + 16);
    float *yrow = xrow + ne0 + 16;
    /* an output larger than the last-level cache: stored around it */
    const bool stream = ggml__output_streams(k, dst);

    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const char *arow = (const char *) a->data + i1 * a->nb[1] + i2 * a->nb[2] + i3 * a->nb[3];
        const char *brow = (const char *) b->data + (i1 % b->ne[1]) * b->nb[1] +
                           (i2 % b->ne[2]) * b->nb[2] + (i3 % b->ne[3]) * b->nb[3];
        char *drow = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        if (fast) {
            apply(k, op, ne0, (float *) drow, (const float *) arow, (const float *) brow, ne10, stream);
            continue;
        }
        ggml__load_row_float(a->type, arow, a->nb[0], ne0, xrow);
        ggml__load_row_float(b->type, brow, b->nb[0], ne10, yrow);
        apply(k, op, ne0, xrow, xrow, yrow, ne10, false);
        ggml__store_row_float(dst->type, drow, dst->nb[0], ne0, xrow);
    }
}

const struct ggml__op_impl ggml__op_binary = {
    .kernel = binary_kernel,
    .supports = binary_supports,
    .n_tasks = NULL,
    .work_size = binary_work_size,
};
