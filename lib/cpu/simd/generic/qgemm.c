/*
 * simd/generic/qgemm.c - the integer tile on interleaved rows
 * (kernels.h, qgemm_packed_tile) and the interleaving (qgemm_pack) in
 * portable C: the entries of every level that has no faster ones, and
 * what the faster ones are tested against.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "generic.h"
#include "../packed-rows.h"

#define ROWS GGML__QGEMM_ROWS

/* The signed weight of element i of row r's block in the group block g (type t). */
static int32_t packed_weight(enum ggml_type t, const uint8_t *g, int r, int i)
{
    if (t == GGML_TYPE_Q8_0)
        return (int8_t) g[ggml__packed_offset(r, 2 + (size_t) i)];
    const uint8_t byte = g[ggml__packed_offset(r, 2 + (size_t) (i % 16))];
    const int nibble = i < 16 ? byte & 0x0f : byte >> 4;
    return t == GGML_TYPE_IQ4_NL ? ggml__iq4nl_values[nibble] : nibble - 8;
}

static void packed_tile(enum ggml_type t, int nb, const void *a, int mr, const struct ggml__qcolumn *cols, int nr,
                        float *const *c)
{
    const size_t group_block = ROWS * ggml_type_size(t);
    for (int j = 0; j < nr; j++) {
        const block_q8_0 *q = cols[j].q;
        for (int r = 0; r < mr; r++) {
            float acc = 0.0f;
            for (int b = 0; b < nb; b++) {
                const uint8_t *g = (const uint8_t *) a + (size_t) b * group_block;
                int32_t sum = 0;
                for (int i = 0; i < QK8_0; i++)
                    sum += packed_weight(t, g, r, i) * q[b].qs[i];
                ggml_fp16_t d;
                memcpy(&d, g + ggml__packed_offset(r, 0), sizeof d);
                acc = fmaf(ggml_fp16_to_fp32(d), (float) sum * cols[j].d[b], acc);
            }
            c[j][r] = acc;
        }
    }
}

void ggml__generic_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                         const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    (void) a_stride;
    packed_tile(GGML_TYPE_Q4_0, nb, a, mr, cols, nr, c);
}

void ggml__generic_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                         const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    (void) a_stride;
    packed_tile(GGML_TYPE_Q8_0, nb, a, mr, cols, nr, c);
}

void ggml__generic_qgemm_packed_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                           const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    (void) a_stride;
    packed_tile(GGML_TYPE_IQ4_NL, nb, a, mr, cols, nr, c);
}

void ggml__generic_qgemm_pack_q4_0(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    ggml__pack_rows(GGML_TYPE_Q4_0, nb, rows, stride, mr, group);
}

void ggml__generic_qgemm_pack_q8_0(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    ggml__pack_rows(GGML_TYPE_Q8_0, nb, rows, stride, mr, group);
}
