/*
 * team.h - a small team of worker threads for the BLAS plugin's operand
 * conversions.
 *
 * The caller of blas_team_run is member 0 and works too; members 1..n-1
 * are threads started on first need and kept for later jobs.  Between
 * jobs they sleep on a condition variable, so an idle team costs no CPU.
 * One job at a time: a team belongs to one backend, whose graph_compute
 * is not reentrant.
 */
#ifndef GGML_BLAS_TEAM_H
#define GGML_BLAS_TEAM_H

struct blas_team;

/* A job: called once for each member ith in 0..nth-1, all at once. */
typedef void (*blas_team_fn)(void *arg, int ith, int nth);

/* A new team with no threads yet, or NULL when out of memory. */
struct blas_team *blas_team_new(void);

/* Stops and joins the threads, frees the team.  NULL is ignored. */
void blas_team_free(struct blas_team *team);

/*
 * Runs fn over nth members and returns when all have finished.  When
 * threads cannot be started, the job runs on fewer members (nth passed to
 * fn says how many): the split stays correct, only slower.
 */
void blas_team_run(struct blas_team *team, int nth, blas_team_fn fn, void *arg);

#endif
