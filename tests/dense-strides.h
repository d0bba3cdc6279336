/*
 * dense-strides.h - for tests that change a node's shape by hand (the
 * RPC server's view of a graph): the strides a tensor that owns its data
 * has for its type and extents.  Include after ggml.h.
 */
#ifndef GGML_BACKEND_TESTS_DENSE_STRIDES_H
#define GGML_BACKEND_TESTS_DENSE_STRIDES_H

/* Sets t's strides to those of its elements laid out densely (rows of whole blocks). */
static inline void dense_strides(struct ggml_tensor *t)
{
    t->nb[0] = ggml_type_size(t->type);
    t->nb[1] = t->nb[0] * (size_t) (t->ne[0] / ggml_blck_size(t->type));
    for (int d = 2; d < GGML_MAX_DIMS; d++)
        t->nb[d] = t->nb[d - 1] * (size_t) t->ne[d - 1];
}

#endif
