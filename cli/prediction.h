/*
 * The predictions as the commands show them (cli/predict.c): avtrace
 * predict prints them, avtrace test names and replays them.
 */
#ifndef AVT_CLI_PREDICTION_H
#define AVT_CLI_PREDICTION_H

#include <stdbool.h>
#include <stddef.h>

#include "names.h"

struct avt_meta;
struct prediction;
struct prediction_set;
struct predict_opts;
struct trace;

/* --atomic F[,F]: the functions meant to be atomic. */
struct atomic_funcs {
	struct names n;
	char *names[16];
	size_t count;
	bool open;
};
/* -1 if arg names more than 16. */
int atomic_funcs_parse(struct atomic_funcs *a, char *arg);
/* Arms o->atomic when functions were named; names come from t. */
void atomic_funcs_arm(struct atomic_funcs *a, const struct trace *t, struct predict_opts *o);
void atomic_funcs_release(struct atomic_funcs *a);

/* The code the recording in dir instrumented (its --access-scope, the
 * program it named) into o: the meta it points into (meta_free it after),
 * or NULL when dir has none (every module then counts as the user's). */
struct avt_meta *recorded_scope(const char *dir, struct predict_opts *o);

/* "vec.c:22 / vec.c:17 / vec.c:40": the sites of a prediction's events. */
const char *prediction_where(struct names *n, const struct trace *t, const struct prediction *p,
			     char *buf, size_t len);
/* The schedules' first comment, re-worded with names. */
void name_predictions(struct prediction_set *set, const struct trace *t);
int print_predictions(const struct prediction_set *set, const struct trace *t);
/* The lock words predict found, and the words that look like lock words
 * but were not taken for locks, one line each (nothing if none). */
int print_lockwords(const struct prediction_set *set, const struct trace *t);
/* One line when predictions were dropped for a read before the violation
 * that would load another value (prediction.prefix_why), else nothing. */
void print_dropped(const struct prediction_set *set);

#endif
