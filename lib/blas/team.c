/*
 * team.c - the conversion thread team (see team.h).
 *
 * State shared with the workers is guarded by one mutex.  A job is posted
 * by bumping `generation`; each worker remembers the last generation it
 * has seen, so a broadcast that arrives while it is busy is never lost and
 * a spurious wake-up finds nothing new.  Workers whose index is not needed
 * by a job (nth smaller than the team) only note the generation.
 * `running` counts the workers still inside the current job; the caller
 * waits on `finished` until it reaches 0.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "team.h"

struct blas_worker {
    struct blas_team *team;
    int index;                   /* member number, 1.. */
    unsigned long seen;          /* last generation looked at */
    pthread_t thread;
};

struct blas_team {
    pthread_mutex_t mutex;
    pthread_cond_t start;        /* a job was posted, or quit */
    pthread_cond_t finished;     /* running dropped to 0 */
    struct blas_worker **workers;
    int n_workers;
    unsigned long generation;    /* bumped for each job */
    int job_nth;
    blas_team_fn job_fn;
    void *job_arg;
    int running;                 /* workers still inside the job */
    bool quit;
};

static void *worker_main(void *arg)
{
    struct blas_worker *w = arg;
    struct blas_team *team = w->team;

    pthread_mutex_lock(&team->mutex);
    for (;;) {
        while (team->generation == w->seen && !team->quit)
            pthread_cond_wait(&team->start, &team->mutex);
        if (team->quit)
            break;
        w->seen = team->generation;
        if (w->index >= team->job_nth)
            continue;
        blas_team_fn fn = team->job_fn;
        void *job_arg = team->job_arg;
        int nth = team->job_nth;
        pthread_mutex_unlock(&team->mutex);
        fn(job_arg, w->index, nth);
        pthread_mutex_lock(&team->mutex);
        if (--team->running == 0)
            pthread_cond_signal(&team->finished);
    }
    pthread_mutex_unlock(&team->mutex);
    return NULL;
}

struct blas_team *blas_team_new(void)
{
    struct blas_team *team = calloc(1, sizeof *team);
    if (team == NULL)
        return NULL;
    pthread_mutex_init(&team->mutex, NULL);
    pthread_cond_init(&team->start, NULL);
    pthread_cond_init(&team->finished, NULL);
    return team;
}

void blas_team_free(struct blas_team *team)
{
    if (team == NULL)
        return;
    pthread_mutex_lock(&team->mutex);
    team->quit = true;
    pthread_cond_broadcast(&team->start);
    pthread_mutex_unlock(&team->mutex);
    for (int i = 0; i < team->n_workers; i++) {
        pthread_join(team->workers[i]->thread, NULL);
        free(team->workers[i]);
    }
    free(team->workers);
    pthread_cond_destroy(&team->finished);
    pthread_cond_destroy(&team->start);
    pthread_mutex_destroy(&team->mutex);
    free(team);
}

/* Starts workers until there are n (called with the mutex held, no job
 * running); returns how many there are, which may be fewer. */
static int grow(struct blas_team *team, int n)
{
    if (n <= team->n_workers)
        return team->n_workers;
    struct blas_worker **list = realloc(team->workers, (size_t) n * sizeof *list);
    if (list == NULL)
        return team->n_workers;
    team->workers = list;
    while (team->n_workers < n) {
        struct blas_worker *w = malloc(sizeof *w);
        if (w == NULL)
            break;
        /* the worker starts from the current generation: only jobs posted
         * after this point are its business */
        *w = (struct blas_worker) { .team = team, .index = team->n_workers + 1, .seen = team->generation };
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            free(w);
            break;
        }
        team->workers[team->n_workers++] = w;
    }
    return team->n_workers;
}

void blas_team_run(struct blas_team *team, int nth, blas_team_fn fn, void *arg)
{
    if (team == NULL || nth <= 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&team->mutex);
    int workers = grow(team, nth - 1);
    if (nth > workers + 1)
        nth = workers + 1;
    team->job_fn = fn;
    team->job_arg = arg;
    team->job_nth = nth;
    team->running = nth - 1;
    team->generation++;
    pthread_cond_broadcast(&team->start);
    pthread_mutex_unlock(&team->mutex);

    fn(arg, 0, nth);

    pthread_mutex_lock(&team->mutex);
    while (team->running > 0)
        pthread_cond_wait(&team->finished, &team->mutex);
    pthread_mutex_unlock(&team->mutex);
}
