/*
 * simd/prefetch-rows.h - software prefetch of the weight rows that follow
 * a multi-row dot product (vec_dot_rows)
 *
 * A matrix x vector product reads its chunk of consecutive weight rows a
 * few rows a call.  When rows are short, each call is a few short streams
 * (a row of 2048 Q4_0 weights is 18 cache lines) that end before the
 * hardware prefetchers have taken them up, and with weights coming from
 * memory the kernels waited on most lines: a decode block with Q4_0
 * weights took 2.2 ms, 1.0 ms with this prefetch.  So a call also fetches
 * the bytes of the rows after its own, [x + nr * bx, x + 2 * nr * bx), an
 * equal share at each of its steps, and the next call finds its rows in
 * the first-level cache or on their way.
 *
 * Rows whose group spans more than PREFETCH_ROWS_MAX_BYTES are left to
 * the hardware: they are long streams it follows well, and lines fetched
 * that far ahead would leave the first-level cache before they are read
 * (4096 F32 weights a row ran 35% slower with the prefetch).
 *
 * A prefetch never faults, so the rows after the last row of a chunk or
 * of the matrix cost a wasted fetch and nothing else; the addresses are
 * kept as integers, never formed as pointers past an object.  Lines are
 * taken as 64 bytes; with longer lines some prefetches are redundant.
 */
#ifndef GGML_BACKEND_CPU_SIMD_PREFETCH_ROWS_H
#define GGML_BACKEND_CPU_SIMD_PREFETCH_ROWS_H

#include <stddef.h>
#include <stdint.h>

#define PREFETCH_ROWS_MAX_BYTES 24576

struct ggml__rows_prefetch {
    uintptr_t next;   /* the first byte of this step's share */
    size_t pace;      /* bytes a step */
    size_t lines;     /* prefetches a step, 64 bytes apart; 0: none */
};

/*
 * The prefetch of the nr rows after the nr rows at x (bx bytes apart) by
 * a call that reads its rows in steps steps.  Step k covers the lines from
 * the one holding next + k * pace to the one holding next + k * pace +
 * 64 * (pace / 64); the next step starts at most one line further, so the
 * steps together cover every line of the rows.
 */
static inline struct ggml__rows_prefetch ggml__rows_prefetch_init(const void *x, size_t bx, int nr, int steps)
{
    const size_t bytes = (size_t) nr * bx;
    const size_t pace = steps > 0 ? (bytes + (size_t) steps - 1) / (size_t) steps : 0;
    const size_t lines = bytes > PREFETCH_ROWS_MAX_BYTES ? 0 : pace / 64 + 1;
    return (struct ggml__rows_prefetch) { (uintptr_t) x + bytes, pace, lines };
}

/* One step's share of the prefetch. */
static inline void ggml__rows_prefetch_step(struct ggml__rows_prefetch *p)
{
    if (p->lines == 0)
        return;
    __builtin_prefetch((const void *) p->next);   /* the first line apart: no loop test for one line */
    for (size_t l = 1; l < p->lines; l++)
        __builtin_prefetch((const void *) (p->next + l * 64));
    p->next += p->pace;
}

#endif
