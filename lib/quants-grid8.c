/*
 * quants-grid8.c - the lookup structure shared by the IQ1 and IQ2
 * quantizers: grids of points with 8 coordinates over 3 levels
 * (struct ggml__grid8 in quants-impl.h states what it holds).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"

#define GROUP 8

/* Appends v to the growing list *list (*used entries of *size); false when memory runs out. */
static bool append(uint16_t **list, size_t *used, size_t *size, uint16_t v)
{
    if (*used == *size) {
        const size_t size2 = *size != 0 ? 2 * *size : 4096;
        uint16_t *list2 = realloc(*list, size2 * sizeof *list2);
        if (list2 == NULL)
            return false;
        *list = list2;
        *size = size2;
    }
    (*list)[(*used)++] = v;
    return true;
}

/*
 * Fills g for the n_points points (at most GGML__GRID8_MAX_POINTS); false when memory
 * runs out (g then owns nothing).  The neighbour lists come from a scan of
 * the whole grid per level vector that is not a point: sq[j][t][p] is the
 * squared difference of level t and coordinate j of point p, so a
 * vector's distances to every point are 8 sums of byte arrays (at most
 * 8 * 16 with the padding, so the bytes never overflow), which vectorize.
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

    /* rows padded to whole chunks of 16 bytes (padding: far beyond any point) */
    enum { CHUNK = 16 };
    const size_t n = (size_t) (n_points + CHUNK - 1) / CHUNK * CHUNK;
    uint8_t *sq = malloc(GROUP * 3 * n);
    if (sq == NULL)
        return false;
    for (int j = 0; j < GROUP; j++)
        for (int t = 0; t < 3; t++)
            for (size_t p = 0; p < n; p++) {
                const int diff = t - (p < (size_t) n_points ? ggml__grid8_level(points[p], j) : 0);
                sq[(size_t) (3 * j + t) * n + p] = p < (size_t) n_points ? (uint8_t) (diff * diff) : 16;
            }

    uint8_t distance[GGML__GRID8_MAX_POINTS];
    uint16_t *list = NULL;
    size_t used = 0, size = 0;
    bool ok = true;
    for (int key = 0; key < GGML__GRID8_KEYS && ok; key++) {
        if (g->map[key] >= 0)
            continue;
        int t[GROUP];
        for (int j = 0, rest = key; j < GROUP; j++, rest /= 3)
            t[j] = rest % 3;
        memcpy(distance, sq + (size_t) t[0] * n, n);
        for (int j = 1; j < GROUP; j++) {
            const uint8_t *row = sq + (size_t) (3 * j + t[j]) * n;
            for (size_t p = 0; p < n; p += CHUNK)
                for (int l = 0; l < CHUNK; l++)
                    distance[p + l] = (uint8_t) (distance[p + l] + row[p + l]);
        }
        uint8_t low[CHUNK];
        memcpy(low, distance, CHUNK);
        for (size_t p = CHUNK; p < n; p += CHUNK)
            for (int l = 0; l < CHUNK; l++)
                low[l] = distance[p + l] < low[l] ? distance[p + l] : low[l];
        uint8_t nearest = low[0];
        for (int l = 1; l < CHUNK; l++)
            nearest = low[l] < nearest ? low[l] : nearest;
        const int limit = nearest + slack;
        const size_t start = used;
        ok = append(&list, &used, &size, 0);
        for (int p = 0; p < n_points && ok; p++)
            if (distance[p] <= limit)
                ok = append(&list, &used, &size, (uint16_t) p);
        if (ok) {
            list[start] = (uint16_t) (used - start - 1);
            g->map[key] = -1 - (int32_t) start;
        }
    }
    free(sq);
    if (!ok) {
        free(list);
        return false;
    }
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
