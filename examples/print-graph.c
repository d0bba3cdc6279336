/*
 * print-graph.c - build a small graph from layout ops and print it.
 *
 * Shows the life cycle every program follows: size a context, create
 * tensors, combine them into op nodes, expand a graph from the result and
 * check once, at the end, that nothing failed along the way.
 *
 *   cc print-graph.c $(pkg-config --cflags --libs ggml-backend)
 */
#include <stdio.h>

#include <ggml.h>

int main(void)
{
    struct ggml_init_params params = {
        .mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead() + 64 * 1024,
        .mem_buffer = NULL,
        .no_alloc = false,
    };
    struct ggml_context *ctx = ggml_init(params);
    if (ctx == NULL)
        return 1;

    /* a 4 x 3 matrix of F32 values 0..11 */
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    ggml_set_name(a, "a");
    float *data = ggml_get_data_f32(a);
    for (int i = 0; i < 12; i++)
        data[i] = (float) i;

    /* transpose it, make the result contiguous, and view it as 2 x 6 F16 */
    struct ggml_tensor *t = ggml_transpose(ctx, a);
    struct ggml_tensor *c = ggml_cont(ctx, t);
    struct ggml_tensor *r = ggml_reshape_2d(ctx, c, 2, 6);
    struct ggml_tensor *h = ggml_cast(ctx, r, GGML_TYPE_F16);
    ggml_set_name(h, "result");

    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, h);
    if (h == NULL || graph == NULL) {
        fprintf(stderr, "building the graph failed\n");
        ggml_free(ctx);
        return 1;
    }

    ggml_graph_print(graph);
    printf("libggml-backend %s: %d nodes, %s has shape %lld x %lld, %zu bytes of context used\n",
           ggml_version(), ggml_graph_n_nodes(graph), ggml_get_name(h),
           (long long) h->ne[0], (long long) h->ne[1], ggml_used_mem(ctx));

    ggml_free(ctx);
    return 0;
}
