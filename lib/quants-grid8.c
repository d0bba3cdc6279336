/*
 * quants-grid8.c - the lookup structure shared by the IQ1 and IQ2
 * quantizers: grids of points with 8 coordinates over 3 levels
 * (struct ggml__grid8 in quants-impl.h states what it holds).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "quants-impl.h"

#define GROUP 8

/*
 * Fills g for the n_points points (n_points <= 65536); false when memory
 * runs out (g then owns nothing).  The neighbour lists come from a scan of
 * the whole grid per level vector that is not a point, with the squared
 * distances of the level indices kept in 16-bit lanes so the scan
 * vectorizes.
 */
bool ggml__grid8_build(struct ggml__grid8 *g, const uint16_t *points, int n_points, int slack)
{
    g->points = points;
    g->n_points = n_points;
    g->neighbours = NULL;
    for (int key = 0; key < GGML__GRID8_KEYS; key++)
        g->map[key] = INT32_MIN;
    for (int p = 0; p < n_points; p++) {
        int level[GROUP];
        for (int j = 0; j < GROUP; j++)
            level[j] = ggml__grid8_level(points[p], j);
        g->map[ggml__grid8_key(level)] = p;
    }

    /* scratch: the points' levels by coordinate, then one distance per point */
    int16_t *levels = malloc((size_t) (GROUP + 1) * (size_t) n_points * sizeof *levels);
    if (levels == NULL)
        return false;
    int16_t *distance = levels + (size_t) GROUP * (size_t) n_points;
    for (int j = 0; j < GROUP; j++)
        for (int p = 0; p < n_points; p++)
            levels[(size_t) j * (size_t) n_points + (size_t) p] = (int16_t) ggml__grid8_level(points[p], j);

    /* two passes: count the lists' length, then fill them */
    uint16_t *list = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t used = 0;
        for (int key = 0; key < GGML__GRID8_KEYS; key++) {
            if (g->map[key] >= 0)
                continue;
            int t[GROUP];
            for (int j = 0, rest = key; j < GROUP; j++, rest /= 3)
                t[j] = rest % 3;
            for (int p = 0; p < n_points; p++)
                distance[p] = 0;
            for (int j = 0; j < GROUP; j++) {
                const int16_t *restrict lj = levels + (size_t) j * (size_t) n_points;
                for (int p = 0; p < n_points; p++) {
                    const int16_t diff = (int16_t) (t[j] - lj[p]);
                    distance[p] = (int16_t) (distance[p] + diff * diff);
                }
            }
            int16_t nearest = INT16_MAX;
            for (int p = 0; p < n_points; p++)
                nearest = distance[p] < nearest ? distance[p] : nearest;
            const size_t start = used++;
            for (int p = 0; p < n_points; p++)
                if (distance[p] <= nearest + slack) {
                    if (list != NULL)
                        list[used] = (uint16_t) p;
                    used++;
                }
            if (list != NULL) {
                list[start] = (uint16_t) (used - start - 1);
                g->map[key] = -1 - (int32_t) start;
            }
        }
        if (pass == 0) {
            list = malloc(used * sizeof *list);
            if (list == NULL) {
                free(levels);
                return false;
            }
        }
    }
    free(levels);
    g->neighbours = list;
    return true;
}

void ggml__grid8_release(struct ggml__grid8 *g)
{
    free(g->neighbours);
    g->neighbours = NULL;
}

/*
 * The best of the n points points[list[0 .. n - 1]] (of points[0 .. n - 1]
 * when list is NULL) for the errors e[j][l] of value j at level l (e[j][3]
 * is never read): the first of the smallest sum, its index in *index.
 */
float ggml__grid8_best(const uint16_t *points, const uint16_t *list, int n, const float e[GROUP][4],
                       unsigned *index)
{
    /* pairs of coordinates: 4 lookups a point instead of 8 */
    float pair[4][16];
    for (int k = 0; k < 4; k++)
        for (int l1 = 0; l1 < 3; l1++)
            for (int l0 = 0; l0 < 3; l0++)
                pair[k][l0 | l1 << 2] = e[2 * k][l0] + e[2 * k + 1][l1];
    float best = INFINITY;
    unsigned at = list != NULL ? list[0] : 0;
    for (int i = 0; i < n; i++) {
        const unsigned p = list != NULL ? list[i] : (unsigned) i;
        const unsigned c = points[p];
        const float err = pair[0][c & 15] + pair[1][(c >> 4) & 15] + pair[2][(c >> 8) & 15] + pair[3][c >> 12];
        if (err < best) {
            best = err;
            at = p;
        }
    }
    *index = at;
    return best;
}
